package pdftext_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// encryptedPages is the text of the generated encrypted files.
var encryptedPages = [][]string{
	{"Exhibit 7 to the Declaration of Jane Roe.", "The lease (with its riders) was signed on 3 March 2021."},
	{"Page two: the rent is $4,100 a month."},
}

// popplerCannotRead are the kinds poppler refuses (its standard handler
// wants /StmF and /StrF to name the same filter): their streams use the
// AESV2 code poppler checks on aesv2-r4, their strings none.
var popplerCannotRead = map[string]bool{"aesv2-r4-strings-identity": true}

// writeTemp writes data to a file of the test's temporary directory.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A file encrypted for its permissions only (the user password empty)
// opens in every viewer: it is extracted, and the note says it was
// encrypted. Strings (the /Title) and streams decrypt, the metadata stream
// too (or is read in the clear under /EncryptMetadata false), and the
// trailer's /ID is read as written. pdftotext reads each file the same, so
// the generator is checked by a reader that is not ours.
func TestOwnerPasswordOnlyIsRead(t *testing.T) {
	for _, e := range pdftexttest.Encryptions() {
		t.Run(e.Name, func(t *testing.T) {
			data := pdftexttest.EncryptedPDF(e, "", "owner-secret", encryptedPages...)
			doc, err := pdftext.Extract(data)
			if err != nil {
				t.Fatal(err)
			}
			for i, lines := range encryptedPages {
				if want := strings.Join(lines, "\n"); i >= len(doc.Pages) || doc.Pages[i] != want {
					t.Fatalf("pages = %q, want page %d %q", doc.Pages, i+1, want)
				}
			}
			if !strings.Contains(doc.Note, "encrypted with permissions only") || !strings.Contains(doc.Note, "read without a password") {
				t.Errorf("note = %q", doc.Note)
			}

			r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Trailer().Key("Info").Key("Title").Text(); got != pdftexttest.EncryptedTitle {
				t.Errorf("title = %q, want %q", got, pdftexttest.EncryptedTitle)
			}
			if got := r.Trailer().Key("ID").Index(0).RawString(); got != pdftexttest.EncryptedID {
				t.Errorf("trailer /ID = %q, want %q (never encrypted)", got, pdftexttest.EncryptedID)
			}
			xmp, err := io.ReadAll(r.Trailer().Key("Root").Key("Metadata").Reader())
			if err != nil || string(xmp) != pdftexttest.EncryptedXMP {
				t.Errorf("metadata = %q, %v", xmp, err)
			}

			t.Run("poppler", func(t *testing.T) {
				if popplerCannotRead[e.Name] {
					t.Skip("poppler does not read /StmF and /StrF naming different filters")
				}
				tool := needPdftotext(t)
				p := writeTemp(t, e.Name+".pdf", data)
				ref := referencePages(t, tool, p)
				if len(ref) != len(doc.Pages) {
					t.Fatalf("pdftotext: %d pages, we: %d", len(ref), len(doc.Pages))
				}
				for i := range ref {
					if a, b := tokens(ref[i]), tokens(doc.Pages[i]); !slices.Equal(a, b) {
						t.Errorf("page %d: pdftotext %q, we %q", i+1, a, b)
					}
				}
				info, err := exec.Command(filepath.Join(filepath.Dir(tool), "pdfinfo"), p).CombinedOutput()
				if err != nil || !strings.Contains(string(info), "Title:           "+pdftexttest.EncryptedTitle+"\n") || !strings.Contains(string(info), "Encrypted:       yes") {
					t.Errorf("pdfinfo: %v: %s", err, info)
				}
			})
		})
	}
}

// A file that needs a user password is refused, saying so, by us and by
// pdftotext; with the password, pdftotext and the parser read it (so the
// refusal is the password's, not a broken file's).
func TestUserPasswordIsRefused(t *testing.T) {
	for _, e := range pdftexttest.Encryptions() {
		t.Run(e.Name, func(t *testing.T) {
			data := pdftexttest.EncryptedPDF(e, "user-secret", "owner-secret", encryptedPages...)
			doc, err := pdftext.Extract(data)
			if !errors.Is(err, pdftext.ErrEncrypted) || !strings.Contains(err.Error(), "needs a user password") {
				t.Fatalf("err = %v, want ErrEncrypted saying it needs a user password", err)
			}
			if doc.Pages != nil {
				t.Errorf("pages returned with an error")
			}
			for _, pw := range []string{"user-secret", "owner-secret"} {
				if e.R < 5 && pw == "owner-secret" {
					continue // the owner password of R2-R4 is not tried (Algorithm 7)
				}
				tries := 0
				r, err := pdf.NewReaderEncrypted(bytes.NewReader(data), int64(len(data)), func() string {
					if tries++; tries > 1 {
						return ""
					}
					return pw
				})
				if err != nil {
					t.Fatalf("with %q: %v", pw, err)
				}
				if got := r.Trailer().Key("Info").Key("Title").Text(); got != pdftexttest.EncryptedTitle {
					t.Errorf("with %q: title = %q", pw, got)
				}
			}

			t.Run("poppler", func(t *testing.T) {
				if popplerCannotRead[e.Name] {
					t.Skip("poppler does not read /StmF and /StrF naming different filters")
				}
				tool := needPdftotext(t)
				p := writeTemp(t, e.Name+".pdf", data)
				if out, err := exec.Command(tool, p, "-").CombinedOutput(); err == nil {
					t.Errorf("pdftotext read it without a password: %s", out)
				}
				out, err := exec.Command(tool, "-upw", "user-secret", p, "-").Output()
				if err != nil || !slices.Equal(tokens(string(out)), tokens(strings.Join(slices.Concat(encryptedPages...), "\n"))) {
					t.Errorf("pdftotext -upw: %v: %q", err, out)
				}
			})
		})
	}
}

// blank replaces old (which must occur) with as many spaces, keeping
// every offset.
func blank(t testing.TB, data []byte, old string) []byte {
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%q not in the file", old)
	}
	return bytes.Replace(data, []byte(old), bytes.Repeat([]byte(" "), len(old)), 1)
}

// Malformed or unknown encryption dictionaries are refused with
// ErrEncrypted saying why, never a panic, never text.
func TestEncryptionDictionaryErrors(t *testing.T) {
	page := encryptedPages[:1]
	with := func(kind, extra string) []byte {
		return pdftexttest.EncryptedPDFWith(pdftexttest.EncryptionNamed(kind), "", "owner", extra, page...)
	}
	noID := pdftexttest.EncryptedPDF(pdftexttest.EncryptionNamed("rc4-128-r3"), "", "owner", page...)
	i := bytes.Index(noID, []byte("/ID ["))
	noID = blank(t, noID, string(noID[i:i+bytes.IndexByte(noID[i:], ']')+1]))
	badRef := bytes.Replace(pdftexttest.EncryptedPDF(pdftexttest.EncryptionNamed("aesv2-r4"), "", "owner", page...), []byte("/Encrypt 8 0 R"), []byte("/Encrypt 9 9 R"), 1)
	for _, c := range []struct {
		name string
		data []byte
		says string
	}{
		{"short U", with("rc4-128-r3", " /U <00112233>"), "/U 4"},
		{"short O", with("aesv2-r4", " /O <00>"), "/O is 1 bytes"},
		{"missing P", with("rc4-40-r2", " /P null"), "missing /P"},
		{"missing ID", noID, "missing /ID"},
		{"absurd Length", with("rc4-128-r3", " /Length 99999"), "99999-bit key"},
		{"negative Length", with("rc4-128-r3", " /Length -128"), "-128-bit key"},
		{"Length not whole bytes", with("rc4-128-r3", " /Length 61"), "61-bit key"},
		{"crypt filter Length absurd", with("rc4-cf-v2-r4", " /CF << /StdV2 << /CFM /V2 /Length 4096 >> >>"), "/Length 4096"},
		{"R=7", with("aes256-r6", " /R 7"), "revision R=7"},
		{"R=1", with("rc4-40-r2", " /R 1"), "revision R=1"},
		{"V=3", with("rc4-128-r3", " /V 3"), "version V=3"},
		{"V=5 with R=4", with("aes256-r6", " /R 4"), "R=4 with version V=5"},
		{"public-key handler", with("aesv2-r4", " /Filter /Adobe.PubSec"), "/Adobe.PubSec"},
		{"unknown crypt filter method", with("aesv2-r4", " /CF << /StdAESV2 << /CFM /ROT13 >> >>"), "method /ROT13"},
		{"undefined crypt filter", with("aesv2-r4", " /StmF /Missing"), "/Missing, which /CF does not define"},
		{"AESV3 under V=4", with("aesv2-r4", " /CF << /StdAESV2 << /CFM /AESV3 >> >>"), "AESV3 under version V=4"},
		{"R6 short U", with("aes256-r6", " /U <0011>"), "/U 2, want 48"},
		{"R6 short UE", with("aes256-r6", " /UE <0011>"), "/UE 2, want 32"},
		{"R6 short Perms", with("aes256-r6", " /Perms <0011>"), "/Perms is 2 bytes"},
		{"R5 no OE", with("aes256-r5", " /OE null"), "/OE is 0 bytes"},
		{"not a dictionary", badRef, "/Encrypt is not a dictionary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := pdftext.Extract(c.data)
			if !errors.Is(err, pdftext.ErrEncrypted) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want ErrEncrypted saying %q", err, c.says)
			}
			if doc.Pages != nil {
				t.Errorf("pages returned with an error")
			}
		})
	}
}

// AES data ends in PKCS#5 padding, which is removed; padding that is not
// well formed is kept as it is, a partial last block is dropped, and an
// AES string shorter than its IV reads as empty: never a panic.
func TestAESPadding(t *testing.T) {
	for _, kind := range []string{"aesv2-r4", "aes256-r6"} {
		e := pdftexttest.NewEncryptor(pdftexttest.EncryptionNamed(kind), "", "owner")
		content := []byte("BT /F1 12 Tf 72 700 Td (Padded text) Tj ET")
		file := func(stream []byte, title string) []byte {
			return e.File("",
				"<< /Type /Catalog /Pages 2 0 R >>",
				"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
				"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
				pdftexttest.Stream(stream, ""),
				"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Title "+title+" >>",
			)
		}
		block := func(data []byte, last byte) []byte {
			out := append(bytes.Clone(data), ' ')
			for len(out)%16 != 15 {
				out = append(out, ' ')
			}
			return append(out, last)
		}
		for _, c := range []struct {
			name   string
			stream []byte
			title  string
			want   string
		}{
			{"well formed", e.SealStreamUnpadded(4, append(bytes.Clone(content), bytes.Repeat([]byte{6}, 6)...)), e.String(5, "t"), "Padded text"},
			{"no padding at all", e.SealStreamUnpadded(4, block(content, ' ')), e.String(5, "t"), "Padded text"},
			{"padding byte 0", e.SealStreamUnpadded(4, block(content, 0)), e.String(5, "t"), "Padded text"},
			{"padding byte 200", e.SealStreamUnpadded(4, block(content, 200)), e.String(5, "t"), "Padded text"},
			{"partial last block", append(e.SealStreamUnpadded(4, block(content, ' ')), "abc"...), "<00112233>", "Padded text"},
			{"only an IV", e.SealStreamUnpadded(4, nil), "<>", ""},
			{"shorter than an IV", []byte("short"), "<0102>", ""},
		} {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				doc, err := pdftext.Extract(file(c.stream, c.title))
				if err != nil {
					t.Fatal(err)
				}
				if len(doc.Pages) != 1 || doc.Pages[0] != c.want {
					t.Errorf("pages = %q, want %q", doc.Pages, c.want)
				}
			})
		}
	}
	// The padding is removed from streams whose end matters: a content
	// stream ending in a string shows no padding bytes.
	e := pdftexttest.NewEncryptor(pdftexttest.EncryptionNamed("aesv2-r4"), "", "owner")
	data := e.File("",
		"<< /Type /Catalog /Pages 2 0 R /Metadata 3 0 R >>",
		"<< /Type /Pages /Kids [] /Count 0 >>",
		e.Stream(3, []byte("exactly 16 bytes"), "/Type /Metadata /Subtype /XML"),
	)
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r.Trailer().Key("Root").Key("Metadata").Reader()); err != nil || string(got) != "exactly 16 bytes" {
		t.Errorf("stream = %q, %v; want the 16 bytes without their block of padding", got, err)
	}
}

// fpdf, another writer, protects with RC4 40-bit (R2); with an empty user
// password its file is read and noted.
func TestFpdfOwnerPasswordOnly(t *testing.T) {
	doc, err := pdftext.Extract(fpdfDoc(t, true, "Secret page.", "Second page."))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Pages, []string{"Secret page.", "Second page."}) {
		t.Errorf("pages = %q", doc.Pages)
	}
	if !strings.Contains(doc.Note, "encrypted with permissions only") {
		t.Errorf("note = %q", doc.Note)
	}
}
