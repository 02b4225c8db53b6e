// Copyright 2014 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// The standard security handler: key derivation, password checks and the
// decryption of strings and streams (PDF 32000-1:2008 §7.6, and ISO
// 32000-2 §7.6.4 for AES-256). brief-rail moved this code out of read.go
// and rewrote it (see HARDENING.md).

package pdf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"io"
)

var passwordPad = []byte{
	0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
}

// PDF encryption parameters. See PDF 32000-1:2008, §7.6.
const (
	// minKeyBits and maxKeyBits bound the key length (in bits) of the
	// MD5-based revisions 2 to 4.
	minKeyBits = 40
	maxKeyBits = 128

	// ouEntryLen is the byte length of the O and U entries for encryption
	// revisions 2 through 4; ouEntryLen6 for revisions 5 and 6 (hash,
	// validation salt, key salt), and oeEntryLen that of OE and UE.
	ouEntryLen  = 32
	ouEntryLen6 = 48
	oeEntryLen  = 32
	permsLen    = 16

	// md5KeyIterations is the number of MD5 rounds used to derive the file
	// key for revisions >= 3 (Algorithm 2, step (b)).
	md5KeyIterations = 50

	// rc4UIterations is the number of RC4 rounds used to derive U for
	// revisions >= 3 (Algorithm 5).
	rc4UIterations = 19

	// maxPassword6 is the bytes of a password revisions 5 and 6 use.
	maxPassword6 = 127
)

// A cryptMethod is how a crypt filter decrypts (its /CFM).
type cryptMethod int

const (
	cryptIdentity cryptMethod = iota // not encrypted (/Identity, /CFM /None)
	cryptRC4                         // /V2: RC4 with a per-object key
	cryptAESV2                       // AES-128-CBC with a per-object key
	cryptAESV3                       // AES-256-CBC with the file key itself
)

// A crypt holds what a Reader needs to decrypt an encrypted file.
type crypt struct {
	key             []byte      // the file key
	str, stm        cryptMethod // the methods of /StrF and /StmF
	encryptMetadata bool        // the /Type /Metadata streams are encrypted
	dict            objptr      // the encryption dictionary (its strings are not encrypted)
}

// ErrInvalidPassword is returned when the password tried (the empty one, by
// NewReader) does not open the file: it needs a user password.
var ErrInvalidPassword = fmt.Errorf("encrypted PDF: invalid password")

// An EncryptionError is an encryption dictionary the reader cannot use:
// one it does not support (another security handler, an unknown version,
// revision or crypt filter), or a malformed one (entries missing or of
// the wrong length).
type EncryptionError struct {
	Unsupported bool
	Reason      string
}

func (e *EncryptionError) Error() string {
	if e.Unsupported {
		return "unsupported PDF encryption: " + e.Reason
	}
	return "malformed PDF encryption dictionary: " + e.Reason
}

func unsupportedEncryption(format string, args ...interface{}) error {
	return &EncryptionError{Unsupported: true, Reason: fmt.Sprintf(format, args...)}
}

func malformedEncryption(format string, args ...interface{}) error {
	return &EncryptionError{Reason: fmt.Sprintf(format, args...)}
}

// initEncrypt reads the trailer's /Encrypt dictionary and, if password
// opens the file (as user or owner), sets r.crypt. See PDF 32000-1:2008,
// §7.6, and ISO 32000-2:2017, §7.6.4.
func (r *Reader) initEncrypt(password string) error {
	dictPtr, _ := r.trailer["Encrypt"].(objptr)
	encrypt, ok := r.resolve(objptr{}, r.trailer["Encrypt"]).data.(dict)
	if !ok {
		return malformedEncryption("the trailer's /Encrypt is not a dictionary")
	}
	if f := encrypt["Filter"]; f != name("Standard") {
		return unsupportedEncryption("security handler %v (only the password-based /Standard handler is read)", objfmt(f))
	}
	V, _ := encrypt["V"].(int64)
	R, _ := encrypt["R"].(int64)
	switch V {
	case 1, 2, 4, 5:
	default:
		return unsupportedEncryption("version V=%d", V)
	}
	switch {
	case R < 2:
		return malformedEncryption("revision R=%d", R)
	case R > 6:
		return unsupportedEncryption("revision R=%d", R)
	case (V == 5) != (R >= 5):
		return malformedEncryption("revision R=%d with version V=%d", R, V)
	}

	c := &crypt{str: cryptRC4, stm: cryptRC4, encryptMetadata: true, dict: dictPtr}
	if em, ok := encrypt["EncryptMetadata"].(bool); ok && V >= 4 {
		c.encryptMetadata = em
	}
	keyLen := 5 // bytes of the file key
	switch V {
	case 2:
		n, ok := encrypt["Length"].(int64)
		if !ok {
			n = minKeyBits
		}
		if n%8 != 0 || n > maxKeyBits || n < minKeyBits {
			return malformedEncryption("%d-bit key", n)
		}
		keyLen = int(n / 8)
	case 4, 5:
		var err error
		if c.stm, c.str, keyLen, err = r.cryptFilters(encrypt, V); err != nil {
			return err
		}
	}
	if R == 2 {
		keyLen = 5
	}

	O, _ := encrypt["O"].(string)
	U, _ := encrypt["U"].(string)
	if R >= 5 {
		key, err := key6(encrypt, R, password, O, U)
		if err != nil {
			return err
		}
		c.key = key
		r.crypt = c
		return nil
	}
	if len(O) < ouEntryLen || len(U) < ouEntryLen {
		return malformedEncryption("/O is %d bytes and /U %d, want %d", len(O), len(U), ouEntryLen)
	}
	O, U = O[:ouEntryLen], U[:ouEntryLen]
	p, ok := encrypt["P"].(int64)
	if !ok {
		return malformedEncryption("missing /P")
	}
	ids, _ := r.trailer["ID"].(array)
	var ID string
	if len(ids) > 0 {
		ID, ok = ids[0].(string)
	}
	if !ok || len(ids) == 0 {
		return malformedEncryption("missing /ID in trailer (the key is derived from it)")
	}
	key := key4(password, O, uint32(p), ID, R, keyLen, c.encryptMetadata)
	if u := userCheck4(key, R, ID); U[:len(u)] != string(u) {
		return ErrInvalidPassword
	}
	c.key = key
	r.crypt = c
	return nil
}

// cryptFilters returns the methods of a V=4 or V=5 dictionary's /StmF and
// /StrF crypt filters, and the length in bytes of the file key.
func (r *Reader) cryptFilters(encrypt dict, V int64) (stm, str cryptMethod, keyLen int, err error) {
	keyLen = 16
	if V == 5 {
		keyLen = 32
	}
	cf, _ := r.resolve(objptr{}, encrypt["CF"]).data.(dict)
	method := func(key string) (cryptMethod, error) {
		n, ok := encrypt[name(key)].(name)
		if !ok && encrypt[name(key)] != nil {
			return 0, malformedEncryption("/%s is %v, not a name", key, objfmt(encrypt[name(key)]))
		}
		if !ok || n == "Identity" {
			return cryptIdentity, nil
		}
		param, ok := r.resolve(objptr{}, cf[n]).data.(dict)
		if !ok {
			return 0, malformedEncryption("/%s names crypt filter /%s, which /CF does not define", key, n)
		}
		if ev, ok := param["AuthEvent"].(name); ok && ev != "DocOpen" && ev != "EFOpen" {
			return 0, unsupportedEncryption("crypt filter /%s is applied on /%s", n, ev)
		}
		switch cfm := param["CFM"]; cfm {
		case nil, name("None"):
			return cryptIdentity, nil
		case name("V2"):
			if V == 4 {
				if l, ok := param["Length"].(int64); ok {
					// The standard says bytes; many writers give bits.
					if l >= minKeyBits {
						l /= 8
					}
					if l < minKeyBits/8 || l > maxKeyBits/8 {
						return 0, malformedEncryption("crypt filter /%s has /Length %v", n, objfmt(param["Length"]))
					}
					keyLen = int(l)
				}
			}
			return cryptRC4, nil
		case name("AESV2"):
			return cryptAESV2, nil
		case name("AESV3"):
			if V != 5 {
				return 0, malformedEncryption("crypt filter /%s is AESV3 under version V=%d", n, V)
			}
			return cryptAESV3, nil
		default:
			return 0, unsupportedEncryption("crypt filter method %v", objfmt(cfm))
		}
	}
	if stm, err = method("StmF"); err != nil {
		return
	}
	if str, err = method("StrF"); err != nil {
		return
	}
	if V == 4 && (stm == cryptAESV2 || str == cryptAESV2) {
		keyLen = 16
	}
	return
}

// key4 is the file key of revisions 2 to 4 (Algorithm 2). Only the first
// 32 bytes of a password count.
func key4(password, O string, P uint32, ID string, R int64, keyLen int, encryptMetadata bool) []byte {
	pw := []byte(password)
	h := md5.New()
	if len(pw) >= len(passwordPad) {
		h.Write(pw[:len(passwordPad)])
	} else {
		h.Write(pw)
		h.Write(passwordPad[:len(passwordPad)-len(pw)])
	}
	h.Write([]byte(O))
	h.Write([]byte{byte(P), byte(P >> 8), byte(P >> 16), byte(P >> 24)})
	h.Write([]byte(ID))
	if R >= 4 && !encryptMetadata {
		h.Write([]byte{0xff, 0xff, 0xff, 0xff})
	}
	key := h.Sum(nil)
	if R >= 3 {
		for i := 0; i < md5KeyIterations; i++ {
			h.Reset()
			h.Write(key[:keyLen])
			key = h.Sum(key[:0])
		}
	}
	return key[:keyLen]
}

// userCheck4 is what /U begins with when key is right: all 32 bytes for
// revision 2 (Algorithm 4), the first 16 for revisions 3 and 4
// (Algorithm 5).
func userCheck4(key []byte, R int64, ID string) []byte {
	c, _ := rc4.NewCipher(key) // key is 5 to 16 bytes: no error
	if R == 2 {
		u := bytes.Clone(passwordPad)
		c.XORKeyStream(u, u)
		return u
	}
	h := md5.New()
	h.Write(passwordPad)
	h.Write([]byte(ID))
	u := h.Sum(nil)
	c.XORKeyStream(u, u)
	key1 := make([]byte, len(key))
	for i := 1; i <= rc4UIterations; i++ {
		for j := range key1 {
			key1[j] = key[j] ^ byte(i)
		}
		c, _ = rc4.NewCipher(key1)
		c.XORKeyStream(u, u)
	}
	return u
}

// key6 checks password against /U, then /O, of a revision 5 or 6
// dictionary (Algorithms 2.A and 2.B) and returns the file key it
// decrypts from /UE or /OE.
func key6(encrypt dict, R int64, password, O, U string) ([]byte, error) {
	OE, _ := encrypt["OE"].(string)
	UE, _ := encrypt["UE"].(string)
	if len(O) < ouEntryLen6 || len(U) < ouEntryLen6 {
		return nil, malformedEncryption("/O is %d bytes and /U %d, want %d", len(O), len(U), ouEntryLen6)
	}
	if len(OE) < oeEntryLen || len(UE) < oeEntryLen {
		return nil, malformedEncryption("/OE is %d bytes and /UE %d, want %d", len(OE), len(UE), oeEntryLen)
	}
	if perms, ok := encrypt["Perms"].(string); encrypt["Perms"] != nil && (!ok || len(perms) < permsLen) {
		return nil, malformedEncryption("/Perms is %d bytes, want %d", len(perms), permsLen)
	}
	pw := []byte(password)
	if len(pw) > maxPassword6 {
		pw = pw[:maxPassword6]
	}
	o, u := []byte(O[:ouEntryLen6]), []byte(U[:ouEntryLen6])
	var wrapped []byte
	var hashKey []byte
	switch {
	case bytes.Equal(hash6(R, pw, u[32:40], nil), u[:32]):
		hashKey, wrapped = hash6(R, pw, u[40:48], nil), []byte(UE[:oeEntryLen])
	case bytes.Equal(hash6(R, pw, o[32:40], u), o[:32]):
		hashKey, wrapped = hash6(R, pw, o[40:48], u), []byte(OE[:oeEntryLen])
	default:
		return nil, ErrInvalidPassword
	}
	block, _ := aes.NewCipher(hashKey) // 32 bytes: no error
	key := make([]byte, oeEntryLen)
	cipher.NewCBCDecrypter(block, make([]byte, aes.BlockSize)).CryptBlocks(key, wrapped)
	return key, nil
}

// hash6 is the password hash of revision 5 (SHA-256 of password, salt and
// udata) or 6 (Algorithm 2.B: rounds of AES-128-CBC and SHA-2 until the
// 64th round or later, at most 288 rounds).
func hash6(R int64, pw, salt, udata []byte) []byte {
	h := sha256.New()
	h.Write(pw)
	h.Write(salt)
	h.Write(udata)
	k := h.Sum(nil)
	if R == 5 {
		return k
	}
	k1 := make([]byte, 0, 64*(len(pw)+64+len(udata)))
	for i := 0; ; i++ {
		k1 = k1[:0]
		for j := 0; j < 64; j++ {
			k1 = append(k1, pw...)
			k1 = append(k1, k...)
			k1 = append(k1, udata...)
		}
		block, _ := aes.NewCipher(k[:16]) // 16 bytes: no error
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(k1, k1)
		e := k1
		// The first 16 bytes of e as a number, modulo 3: 256 ≡ 1 (mod 3),
		// so the sum of the bytes modulo 3.
		sum := 0
		for _, b := range e[:16] {
			sum += int(b)
		}
		switch sum % 3 {
		case 0:
			s := sha256.Sum256(e)
			k = s[:]
		case 1:
			s := sha512.Sum384(e)
			k = s[:]
		case 2:
			s := sha512.Sum512(e)
			k = s[:]
		}
		// e's last byte is at most 255, so this ends by round 287.
		if i >= 63 && int(e[len(e)-1]) <= i+1-32 {
			break
		}
	}
	return k[:32]
}

// objectKey is the key of object ptr under method m: the file key itself
// for AESV3, else the MD5 of the file key and the object's number and
// generation (Algorithm 1), min(n+5, 16) bytes.
func (c *crypt) objectKey(m cryptMethod, ptr objptr) []byte {
	if m == cryptAESV3 {
		return c.key
	}
	h := md5.New()
	h.Write(c.key)
	h.Write([]byte{byte(ptr.id), byte(ptr.id >> 8), byte(ptr.id >> 16), byte(ptr.gen), byte(ptr.gen >> 8)})
	if m == cryptAESV2 {
		h.Write([]byte("sAlT"))
	}
	return h.Sum(nil)[:min(len(c.key)+5, md5.Size)]
}

// decryptString decrypts a string of object ptr. An AES string shorter
// than its IV is empty; a partial last block is dropped; the PKCS#5
// padding is removed when it is well formed.
func (c *crypt) decryptString(ptr objptr, x string) string {
	if ptr == c.dict {
		return x
	}
	switch c.str {
	case cryptIdentity:
		return x
	case cryptRC4:
		ciph, _ := rc4.NewCipher(c.objectKey(c.str, ptr))
		data := []byte(x)
		ciph.XORKeyStream(data, data)
		return string(data)
	}
	s := []byte(x)
	if len(s) < 2*aes.BlockSize {
		return ""
	}
	block, _ := aes.NewCipher(c.objectKey(c.str, ptr))
	iv := s[:aes.BlockSize]
	s = s[aes.BlockSize:]
	s = s[:len(s)-len(s)%aes.BlockSize]
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(s, s)
	return string(unpad(s))
}

// decryptStream decrypts the data of stream v (object ptr). Cross-reference
// streams are never encrypted, nor metadata streams under
// /EncryptMetadata false.
func (c *crypt) decryptStream(v Value, ptr objptr, rd io.Reader) io.Reader {
	switch v.Key("Type").Name() {
	case "XRef":
		return rd
	case "Metadata":
		if !c.encryptMetadata {
			return rd
		}
	}
	switch c.stm {
	case cryptIdentity:
		return rd
	case cryptRC4:
		ciph, _ := rc4.NewCipher(c.objectKey(c.stm, ptr))
		return &cipher.StreamReader{S: ciph, R: rd}
	}
	block, _ := aes.NewCipher(c.objectKey(c.stm, ptr))
	return &cbcReader{block: block, rd: rd}
}

// unpad removes well-formed PKCS#5 padding (1 to 16 bytes, each the
// count); other endings are kept as they are.
func unpad(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	n := int(b[len(b)-1])
	if n < 1 || n > aes.BlockSize || n > len(b) {
		return b
	}
	for _, x := range b[len(b)-n:] {
		if int(x) != n {
			return b
		}
	}
	return b[:len(b)-n]
}

// A cbcReader decrypts an AES-CBC stream: its first 16 bytes are the IV.
// The last block is held back until the end is seen, so that its padding
// can be removed; a partial last block is dropped.
type cbcReader struct {
	block cipher.Block
	cbc   cipher.BlockMode // nil until the IV is read
	rd    io.Reader
	chunk []byte // ciphertext read, then decrypted in place
	held  []byte // the last decrypted block, not yet released
	out   []byte // plaintext ready for Read
	obuf  []byte // out's buffer
	err   error  // once set, returned after out is drained
}

func (r *cbcReader) Read(b []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.cbc == nil {
			iv := make([]byte, aes.BlockSize)
			if _, err := io.ReadFull(r.rd, iv); err != nil {
				r.err = eofOf(err)
				continue
			}
			r.cbc = cipher.NewCBCDecrypter(r.block, iv)
			r.chunk = make([]byte, 4096)
			continue
		}
		n, err := io.ReadFull(r.rd, r.chunk)
		n -= n % aes.BlockSize
		out := r.obuf[:0]
		if n > 0 {
			r.cbc.CryptBlocks(r.chunk[:n], r.chunk[:n])
			// The block held before comes first; the new last one is held.
			out = append(out, r.held...)
			out = append(out, r.chunk[:n-aes.BlockSize]...)
			r.held = append(r.held[:0], r.chunk[n-aes.BlockSize:n]...)
		}
		if err != nil {
			out = append(out, unpad(r.held)...)
			r.held = r.held[:0]
			r.err = eofOf(err)
		}
		r.obuf = out[:0]
		r.out = out
	}
	n := copy(b, r.out)
	r.out = r.out[n:]
	return n, nil
}

// eofOf is io.EOF for the ends of input io.ReadFull reports, else err.
func eofOf(err error) error {
	if err == io.ErrUnexpectedEOF {
		return io.EOF
	}
	return err
}
