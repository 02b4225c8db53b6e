package pdftexttest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"strings"
)

// An Encryption is one kind of the standard security handler's
// encryption (PDF 32000-1 §7.6, ISO 32000-2 §7.6.4), as EncryptedPDF
// writes it.
type Encryption struct {
	Name string
	V, R int
	// Bits is the file key's length: 40 to 128 for RC4 and AESV2 (AESV2
	// is always 128), 256 for AES-256.
	Bits int
	// StmF and StrF are the methods of a V=4 or V=5 dictionary's stream
	// and string crypt filters: "V2" (RC4), "AESV2", "AESV3" or
	// "Identity". Unused for V=1 and V=2 (RC4 for both).
	StmF, StrF string
	// NoEncryptMetadata writes /EncryptMetadata false (V=4 and V=5): the
	// metadata stream is left in the clear and the key derivation changes.
	NoEncryptMetadata bool
}

// Encryptions are the kinds of encryption readers meet: RC4 40-bit (R2)
// and 128-bit (R3), AES-128 (R4) with and without encrypted metadata, RC4
// inside crypt filters (V4, /CFM /V2), a V4 file whose strings are not
// encrypted (/StrF /Identity), and AES-256 (R5, the Acrobat 9 extension,
// and R6, PDF 2.0).
func Encryptions() []Encryption {
	return []Encryption{
		{Name: "rc4-40-r2", V: 1, R: 2, Bits: 40},
		{Name: "rc4-128-r3", V: 2, R: 3, Bits: 128},
		{Name: "aesv2-r4", V: 4, R: 4, Bits: 128, StmF: "AESV2", StrF: "AESV2"},
		{Name: "aesv2-r4-metadata-clear", V: 4, R: 4, Bits: 128, StmF: "AESV2", StrF: "AESV2", NoEncryptMetadata: true},
		{Name: "rc4-cf-v2-r4", V: 4, R: 4, Bits: 128, StmF: "V2", StrF: "V2"},
		{Name: "aesv2-r4-strings-identity", V: 4, R: 4, Bits: 128, StmF: "AESV2", StrF: "Identity"},
		{Name: "aes256-r5", V: 5, R: 5, Bits: 256, StmF: "AESV3", StrF: "AESV3"},
		{Name: "aes256-r6", V: 5, R: 6, Bits: 256, StmF: "AESV3", StrF: "AESV3"},
		{Name: "aes256-r6-metadata-clear", V: 5, R: 6, Bits: 256, StmF: "AESV3", StrF: "AESV3", NoEncryptMetadata: true},
	}
}

// EncryptionNamed is the kind of Encryptions of that name; it panics on an
// unknown name.
func EncryptionNamed(name string) Encryption {
	for _, e := range Encryptions() {
		if e.Name == name {
			return e
		}
	}
	panic("pdftexttest: no encryption " + name)
}

// EncryptedTitle and EncryptedXMP are the document information title (an
// encrypted string) and the metadata stream EncryptedPDF writes.
const (
	EncryptedTitle = "Exhibit 7: Lease Agreement"
	EncryptedXMP   = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Exhibit 7</rdf:li></rdf:Alt></dc:title></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="r"?>`
)

// The permissions EncryptedPDF grants: printing only (bits 1-2 and 7-8,
// 13-32 set as the standard asks; copying and editing refused).
const encryptedP = -3900

// EncryptedID is both strings of the trailer's /ID in the files an
// Encryptor writes (never encrypted).
const EncryptedID = "brief-rail/test\x00\x01\x02\x03\xfe\xff\x80\x7f"

// EncryptedPDF is a PDF of one page per entry of pages (each a few lines of
// Helvetica), with an information dictionary whose /Title is
// EncryptedTitle and a catalog /Metadata stream of EncryptedXMP, encrypted
// as e says with the user password user (empty: every viewer opens it,
// the owner password only restricts permissions) and the owner password
// owner. Everything is deterministic: the same arguments give the same
// bytes.
func EncryptedPDF(e Encryption, user, owner string, pages ...[]string) []byte {
	return EncryptedPDFWith(e, user, owner, "", pages...)
}

// EncryptedPDFWith is EncryptedPDF whose encryption dictionary has extra
// entries, written after (and so overriding, for readers that keep the
// last) the ones computed: a malformed dictionary for tests.
func EncryptedPDFWith(e Encryption, user, owner, extra string, pages ...[]string) []byte {
	w := NewEncryptor(e, user, owner)
	// Objects: 1 catalog, 2 pages, 3 font, 4 metadata, 5 info, then each
	// page and its content; File adds the encryption dictionary.
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 6+2*i)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /Metadata 4 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)),
		helvetica,
		w.stream(4, []byte(EncryptedXMP), "/Type /Metadata /Subtype /XML", !e.NoEncryptMetadata),
		fmt.Sprintf("<< /Title %s /Producer %s >>", w.String(5, EncryptedTitle), w.String(5, "brief-rail pdftexttest")),
	}
	for i, lines := range pages {
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 72 760 Td 14 TL\n")
		for _, l := range lines {
			fmt.Fprintf(&c, "(%s) Tj T*\n", escape(l))
		}
		c.WriteString("ET")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 7+2*i),
			w.Stream(7+2*i, []byte(c.String()), ""))
	}
	return w.File(extra, objs...)
}

// File assembles a classic PDF of objs (object i+1 is objs[i], object 1
// the catalog) whose strings and streams the caller encrypted with w, then
// w's encryption dictionary (with extra entries at its end), and a
// trailer naming it and the /ID the keys were derived from; object 5, if
// there is one, is the document information dictionary.
func (w *Encryptor) File(extra string, objs ...string) []byte {
	objs = append(objs, strings.TrimSuffix(w.Dict(), ">>")+extra+" >>")
	info := ""
	if len(objs) > 5 {
		info = " /Info 5 0 R"
	}
	return rawPDF("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
		fmt.Sprintf("%s /Encrypt %d 0 R /ID [<%x> <%x>]", info, len(objs), EncryptedID, EncryptedID), objs)
}

// An Encryptor encrypts the strings and streams of one file, whose
// encryption dictionary is Dict.
type Encryptor struct {
	e          Encryption
	key        []byte // the file key
	o, u       []byte
	oe, ue     []byte // R5 and R6
	perms      []byte
	stm, strfm string // methods
	ivs        int    // IVs handed out (they are derived, not random)
}

// NewEncryptor derives the keys and entries of encryption e with the user
// and owner passwords (an empty owner password is the user's).
func NewEncryptor(e Encryption, user, owner string) *Encryptor {
	w := &Encryptor{e: e, stm: e.StmF, strfm: e.StrF}
	if e.V < 4 {
		w.stm, w.strfm = "V2", "V2"
	}
	if e.R >= 5 {
		w.setup6(user, owner)
	} else {
		w.setup4(user, owner)
	}
	return w
}

// padded is a password's first 32 bytes completed with the standard pad
// (Algorithm 2 step a).
func padded(pw string) []byte {
	pad := []byte{
		0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08,
		0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
	}
	out := append([]byte(pw), pad...)
	return out[:32]
}

func rc4Crypt(key, data []byte) []byte {
	c, err := rc4.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

// rc4Rounds is RC4 under key, then (R3 and later) 19 more times under key
// with each byte XORed with the round number (Algorithms 3 and 5).
func rc4Rounds(key, data []byte, r int) []byte {
	data = rc4Crypt(key, data)
	if r < 3 {
		return data
	}
	for i := byte(1); i <= 19; i++ {
		k := bytes.Clone(key)
		for j := range k {
			k[j] ^= i
		}
		data = rc4Crypt(k, data)
	}
	return data
}

// setup4 computes O (Algorithm 3), the file key (Algorithm 2) and U
// (Algorithms 4 and 5) of revisions 2 to 4.
func (w *Encryptor) setup4(user, owner string) {
	n := w.e.Bits / 8
	if w.e.R == 2 {
		n = 5
	}
	if owner == "" {
		owner = user
	}
	ok := md5.Sum(padded(owner))
	if w.e.R >= 3 {
		for i := 0; i < 50; i++ {
			ok = md5.Sum(ok[:])
		}
	}
	w.o = rc4Rounds(ok[:n], padded(user), w.e.R)

	var m []byte
	m = append(m, padded(user)...)
	m = append(m, w.o...)
	m = binary.LittleEndian.AppendUint32(m, permBits())
	m = append(m, EncryptedID...)
	if w.e.R >= 4 && w.e.NoEncryptMetadata {
		m = append(m, 0xff, 0xff, 0xff, 0xff)
	}
	k := md5.Sum(m)
	if w.e.R >= 3 {
		for i := 0; i < 50; i++ {
			k = md5.Sum(k[:n])
		}
	}
	w.key = bytes.Clone(k[:n])

	if w.e.R == 2 {
		w.u = rc4Crypt(w.key, padded(""))
		return
	}
	h := md5.Sum(append(padded(""), EncryptedID...))
	w.u = append(rc4Rounds(w.key, h[:], w.e.R), bytes.Repeat([]byte{0x5a}, 16)...)
}

// hash2B is the password hash of revision 6 (ISO 32000-2 Algorithm 2.B),
// or of revision 5 (one SHA-256).
func hash2B(r int, pw, salt, udata []byte) []byte {
	first := sha256.Sum256(bytes.Join([][]byte{pw, salt, udata}, nil))
	k := first[:]
	if r == 5 {
		return k
	}
	var e []byte
	for round := 1; ; round++ {
		unit := bytes.Join([][]byte{pw, k, udata}, nil)
		k1 := bytes.Repeat(unit, 64)
		blk, err := aes.NewCipher(k[:16])
		if err != nil {
			panic(err)
		}
		e = make([]byte, len(k1))
		cipher.NewCBCEncrypter(blk, k[16:32]).CryptBlocks(e, k1)
		var rem int
		for _, b := range e[:16] {
			rem = (rem*256 + int(b)) % 3
		}
		switch rem {
		case 0:
			s := sha256.Sum256(e)
			k = s[:]
		case 1:
			s := sha512.Sum384(e)
			k = s[:]
		default:
			s := sha512.Sum512(e)
			k = s[:]
		}
		if round >= 64 && int(e[len(e)-1]) <= round-32 {
			return k[:32]
		}
	}
}

// aes256NoIV encrypts whole blocks with AES-256-CBC and a zero IV.
func aes256NoIV(key, data []byte) []byte {
	blk, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(data))
	cipher.NewCBCEncrypter(blk, make([]byte, 16)).CryptBlocks(out, data)
	return out
}

// setup6 computes U, UE, O, OE and Perms of revisions 5 and 6
// (Algorithms 8, 9 and 10) around a fixed file key.
func (w *Encryptor) setup6(user, owner string) {
	if owner == "" {
		owner = user
	}
	key := sha256.Sum256([]byte("brief-rail test file key"))
	w.key = key[:]
	uvs, uks := []byte("uvsalt01"), []byte("ukslt-02")
	ovs, oks := []byte("ovsalt03"), []byte("okslt-04")
	up, op := []byte(user), []byte(owner)
	w.u = append(append(hash2B(w.e.R, up, uvs, nil), uvs...), uks...)
	w.ue = aes256NoIV(hash2B(w.e.R, up, uks, nil), w.key)
	w.o = append(append(hash2B(w.e.R, op, ovs, w.u), ovs...), oks...)
	w.oe = aes256NoIV(hash2B(w.e.R, op, oks, w.u), w.key)
	perms := binary.LittleEndian.AppendUint32(nil, permBits())
	perms = append(perms, 0xff, 0xff, 0xff, 0xff)
	if w.e.NoEncryptMetadata {
		perms = append(perms, 'F')
	} else {
		perms = append(perms, 'T')
	}
	perms = append(perms, 'a', 'd', 'b', 1, 2, 3, 4)
	blk, _ := aes.NewCipher(w.key)
	w.perms = make([]byte, 16)
	blk.Encrypt(w.perms, perms)
}

// Dict is the encryption dictionary.
func (w *Encryptor) Dict() string {
	e := w.e
	var b strings.Builder
	fmt.Fprintf(&b, "<< /Filter /Standard /V %d /R %d /O <%x> /U <%x> /P %d", e.V, e.R, w.o, w.u, encryptedP)
	if e.V == 2 || e.V == 4 {
		fmt.Fprintf(&b, " /Length %d", e.Bits)
	}
	if e.V >= 4 {
		var cf []string
		for _, m := range []string{w.stm, w.strfm} {
			if m == "Identity" || len(cf) > 0 && cf[0] == m {
				continue
			}
			cf = append(cf, m)
		}
		b.WriteString(" /CF <<")
		for _, m := range cf {
			fmt.Fprintf(&b, " /Std%s << /Type /CryptFilter /CFM /%s /AuthEvent /DocOpen /Length %d >>", m, m, e.Bits/8)
		}
		b.WriteString(" >>")
		for _, f := range [][2]string{{"StmF", w.stm}, {"StrF", w.strfm}} {
			if f[1] == "Identity" {
				fmt.Fprintf(&b, " /%s /Identity", f[0])
			} else {
				fmt.Fprintf(&b, " /%s /Std%s", f[0], f[1])
			}
		}
		if e.NoEncryptMetadata {
			b.WriteString(" /EncryptMetadata false")
		}
	}
	if e.R >= 5 {
		fmt.Fprintf(&b, " /OE <%x> /UE <%x> /Perms <%x>", w.oe, w.ue, w.perms)
	}
	b.WriteString(" >>")
	return b.String()
}

// objKey is object num's key under method m (Algorithm 1).
func (w *Encryptor) objKey(m string, num int) []byte {
	if m == "AESV3" {
		return w.key
	}
	in := append(bytes.Clone(w.key), byte(num), byte(num>>8), byte(num>>16), 0, 0)
	if m == "AESV2" {
		in = append(in, "sAlT"...)
	}
	sum := md5.Sum(in)
	return sum[:min(len(w.key)+5, 16)]
}

// seal encrypts data of object num under method m: RC4, or AES-CBC with
// a derived IV before the data and PKCS#5 padding after.
func (w *Encryptor) seal(m string, num int, data []byte) []byte {
	return w.sealPad(m, num, data, true)
}

// SealStreamUnpadded is stream data of object num encrypted with the
// stream method and, under AES, no padding added: data (whole 16-byte
// blocks) ends as the caller wrote it, well-formed padding or not.
func (w *Encryptor) SealStreamUnpadded(num int, data []byte) []byte {
	return w.sealPad(w.stm, num, data, false)
}

func (w *Encryptor) sealPad(m string, num int, data []byte, padded bool) []byte {
	switch m {
	case "Identity":
		return data
	case "V2":
		return rc4Crypt(w.objKey(m, num), data)
	}
	w.ivs++
	iv := md5.Sum([]byte(fmt.Sprintf("iv %d %d", num, w.ivs)))
	plain := bytes.Clone(data)
	if padded {
		pad := 16 - len(data)%16
		plain = append(plain, bytes.Repeat([]byte{byte(pad)}, pad)...)
	}
	blk, err := aes.NewCipher(w.objKey(m, num))
	if err != nil {
		panic(err)
	}
	out := append([]byte(nil), iv[:]...)
	out = append(out, make([]byte, len(plain))...)
	cipher.NewCBCEncrypter(blk, iv[:]).CryptBlocks(out[16:], plain)
	return out
}

// String is s as an encrypted hex string of object num.
func (w *Encryptor) String(num int, s string) string {
	return fmt.Sprintf("<%x>", w.seal(w.strfm, num, []byte(s)))
}

// Stream is an encrypted stream object of number num holding data, with
// extra dictionary entries.
func (w *Encryptor) Stream(num int, data []byte, dict string) string {
	return w.stream(num, data, dict, true)
}

// stream is Stream, left in the clear unless encrypt.
func (w *Encryptor) stream(num int, data []byte, dict string, encrypt bool) string {
	if encrypt {
		data = w.seal(w.stm, num, data)
	}
	return Stream(data, dict)
}

// permBits is /P as the 32 bits the key derivation and /Perms hold.
func permBits() uint32 {
	p := int32(encryptedP)
	return uint32(p)
}
