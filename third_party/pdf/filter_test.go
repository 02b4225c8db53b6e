package pdf

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeWith runs data through one filter, the input given a byte at a
// time and the output read a byte at a time and then whole, and checks the
// two agree (the decoders keep state across short reads).
func decodeWith(t *testing.T, name string, param dict, data []byte) ([]byte, error) {
	t.Helper()
	p := Value{data: param}
	if param == nil {
		p = Value{}
	}
	whole, err := io.ReadAll(applyFilter(bytes.NewReader(data), name, p))
	var small []byte
	rd := applyFilter(iotest.OneByteReader(bytes.NewReader(data)), name, p)
	b := make([]byte, 1)
	var err2 error
	for {
		n, e := rd.Read(b)
		small = append(small, b[:n]...)
		if e != nil {
			if e != io.EOF {
				err2 = e
			}
			break
		}
	}
	if !bytes.Equal(whole, small) || (err == nil) != (err2 == nil) {
		t.Errorf("%s: read whole %q (%v), a byte at a time %q (%v)", name, whole, err, small, err2)
	}
	if err2 != nil {
		// An error stays: a caller that reads on sees it again, not the
		// data after the bad byte.
		if n, e := rd.Read(make([]byte, 64)); n != 0 || e == nil || e == io.EOF {
			t.Errorf("%s: after %v, Read = %d, %v", name, err2, n, e)
		}
	}
	return whole, err
}

func TestFilterVectors(t *testing.T) {
	png := dict{"Predictor": int64(12), "Columns": int64(3)}
	for _, c := range []struct {
		name   string
		param  dict
		in     string
		want   string
		errHas string
	}{
		{"ASCIIHexDecode", nil, "48 65\n6C6c6F>", "Hello", ""},
		{"AHx", nil, "4142434>", "ABC@", ""},
		{"AHx", nil, "41>4243", "A", ""},
		{"AHx", nil, "4142", "AB", ""},
		{"AHx", nil, "4G>", "", "not a hexadecimal digit"},
		{"AHx", nil, "41 G 42>", "", "not a hexadecimal digit"},
		{"RunLengthDecode", nil, "\x02abc\xfex\x80junk", "abcxxx", ""},
		{"RL", nil, "\x00a\x81b", "a" + strings.Repeat("b", 128), ""},
		{"RL", nil, "\x05ab", "", "ends inside a run"},
		{"RL", nil, "\x01ab\x05a", "", "ends inside a run"},
		{"RL", nil, "\x00a\xfe", "", "before the byte to repeat"},
		{"A85", nil, "87cURD]i,\"Ebo80~>", "Hello World!", ""},
		// PNG rows: None, Sub, Up, Average, Paeth.
		{"FlateDecode", png, string(zl("\x00\x01\x02\x03\x01\x01\x01\x01\x02\x01\x01\x01\x03\x00\x00\x00\x04\x00\x00\x00")), "\x01\x02\x03\x01\x02\x03\x02\x03\x04\x01\x02\x03\x01\x02\x03", ""},
		{"FlateDecode", dict{"Predictor": int64(15), "Columns": int64(3), "Colors": int64(1)}, string(zl("\x00\x01\x02")), "\x01\x02", ""},
		{"FlateDecode", png, string(zl("\x05\x01\x02\x03")), "", "row filter 5"},
		// TIFF predictor 2 at 8, 4 and 16 bits (the carry between bytes).
		{"Fl", dict{"Predictor": int64(2), "Columns": int64(4)}, string(zl("\x01\x01\x01\x01\x05\x00\x00\x00")), "\x01\x02\x03\x04\x05\x05\x05\x05", ""},
		{"Fl", dict{"Predictor": int64(2), "Columns": int64(4), "BitsPerComponent": int64(4)}, string(zl("\x11\x11")), "\x12\x34", ""},
		{"Fl", dict{"Predictor": int64(2), "Columns": int64(2), "BitsPerComponent": int64(16)}, string(zl("\x00\xff\x00\x01")), "\x00\xff\x01\x00", ""},
		{"Fl", dict{"Predictor": int64(2), "Columns": int64(2), "Colors": int64(2)}, string(zl("\x01\x02\x01\x01")), "\x01\x02\x02\x03", ""},
	} {
		got, err := decodeWith(t, c.name, c.param, []byte(c.in))
		switch {
		case c.errHas != "":
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s %q: err = %v, want %q", c.name, c.in, err, c.errHas)
			}
		case err != nil || string(got) != c.want:
			t.Errorf("%s %q: %q (%v), want %q", c.name, c.in, got, err, c.want)
		}
	}
}

// zl is p in zlib's format, stored (no compression), written by hand.
func zl(p string) []byte {
	b := []byte{0x78, 0x01, 0x01, byte(len(p)), byte(len(p) >> 8), ^byte(len(p)), ^byte(len(p) >> 8)}
	b = append(b, p...)
	var s1, s2 uint32 = 1, 0
	for i := 0; i < len(p); i++ {
		s1 = (s1 + uint32(p[i])) % 65521
		s2 = (s2 + s1) % 65521
	}
	a := s2<<16 | s1
	return append(b, byte(a>>24), byte(a>>16), byte(a>>8), byte(a))
}
