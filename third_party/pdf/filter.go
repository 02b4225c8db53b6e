// The standard stream filters (PDF 32000-1 §7.4) that carry text-relevant
// data, and their predictors (added in brief-rail's copy; see HARDENING.md).

package pdf

import (
	"bufio"
	"compress/lzw"
	"compress/zlib"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"

	tifflzw "golang.org/x/image/tiff/lzw"
)

// Bounds on a stream's filters and predictor parameters.
const (
	// maxFilters bounds the filters applied to one stream.
	maxFilters = 16
	// maxPredictorColumns bounds a predictor's /Columns.
	maxPredictorColumns = 1 << 20
	// maxPredictorColors bounds a predictor's /Colors.
	maxPredictorColors = 32
	// maxPredictorRow bounds a predictor's row, in bytes.
	maxPredictorRow = 4 << 20
)

// filterNames maps the abbreviated filter names (used in inline images,
// and by some writers in streams) to the full ones.
var filterNames = map[string]string{
	"AHx": "ASCIIHexDecode",
	"A85": "ASCII85Decode",
	"LZW": "LZWDecode",
	"Fl":  "FlateDecode",
	"RL":  "RunLengthDecode",
	"DCT": "DCTDecode",
	"CCF": "CCITTFaxDecode",
}

// imageFilters are the filters whose data is an image; a stream of text
// never uses them.
var imageFilters = map[string]bool{
	"DCTDecode":      true,
	"JPXDecode":      true,
	"CCITTFaxDecode": true,
	"JBIG2Decode":    true,
}

// filters returns the stream's filters and the parameters of each: /Filter
// is a name or an array of names; /DecodeParms is a dictionary (for a
// single filter) or an array with an entry (a dictionary or null) per
// filter, and may be missing.
func (v Value) filters() ([]string, []Value) {
	filter := v.Key("Filter")
	param := v.Key("DecodeParms")
	switch filter.Kind() {
	case Null:
		return nil, nil
	case Name:
		if param.Kind() == Array {
			param = param.Index(0)
		}
		return []string{filter.Name()}, []Value{param}
	case Array:
		n := filter.Len()
		if n > maxFilters {
			panic(fmt.Errorf("malformed PDF: %d filters on one stream (at most %d)", n, maxFilters))
		}
		names := make([]string, n)
		params := make([]Value, n)
		for i := range n {
			f := filter.Index(i)
			if f.Kind() != Name {
				panic(fmt.Errorf("malformed PDF: filter %v is not a name", f))
			}
			names[i] = f.Name()
			switch {
			case param.Kind() == Array:
				params[i] = param.Index(i)
			case param.Kind() == Dict && n == 1:
				params[i] = param
			}
		}
		return names, params
	}
	panic(fmt.Errorf("unsupported filter %v", filter))
}

// applyFilter decodes rd with the filter name and its parameters. A filter
// that cannot be applied (unknown, image-only, bad parameters) panics with
// an error; data that cannot be decoded is an error from Read.
func applyFilter(rd io.Reader, name string, param Value) io.Reader {
	if full, ok := filterNames[name]; ok {
		name = full
	}
	if param.Kind() != Dict {
		param = Value{}
	}
	switch name {
	case "FlateDecode":
		zr, err := zlib.NewReader(rd)
		if err != nil {
			panic(fmt.Errorf("FlateDecode: %v", err))
		}
		return predictor(zr, param)
	case "LZWDecode":
		var lr io.ReadCloser
		switch early := param.Key("EarlyChange"); {
		case early.Kind() == Null || early.Kind() == Integer && early.Int64() == 1:
			// The default: the code width grows one code early, as in TIFF.
			lr = tifflzw.NewReader(rd, tifflzw.MSB, 8)
		case early.Kind() == Integer && early.Int64() == 0:
			// The code width grows when the table needs it, as in GIF.
			lr = lzw.NewReader(rd, lzw.MSB, 8)
		default:
			panic(fmt.Errorf("LZWDecode: /EarlyChange %v is neither 0 nor 1", early))
		}
		return predictor(&lzwReader{r: lr}, param)
	case "ASCII85Decode":
		return ascii85.NewDecoder(newAlphaReader(rd))
	case "ASCIIHexDecode":
		return &hexReader{r: bufio.NewReader(rd)}
	case "RunLengthDecode":
		return &runLengthReader{r: bufio.NewReader(rd)}
	}
	if imageFilters[name] {
		panic(fmt.Errorf("filter %s is for image data, which holds no text", name))
	}
	panic(fmt.Errorf("unknown filter %s", name))
}

// lzwReader ends the stream where its data ends when the end-of-data code
// is missing (poppler reads such streams too).
type lzwReader struct {
	r io.Reader
}

func (l *lzwReader) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("LZWDecode: %v", err)
	}
	return n, err
}

// hexReader decodes ASCIIHexDecode: pairs of hexadecimal digits, white
// space ignored, '>' the end of the data; an odd final digit is followed
// by an implied 0.
type hexReader struct {
	r    *bufio.Reader
	done bool
	err  error // the first error, returned from then on
}

func (h *hexReader) Read(b []byte) (int, error) {
	if h.err != nil {
		return 0, h.err
	}
	n, err := h.read(b)
	if err != nil && err != io.EOF {
		h.err = err
	}
	return n, err
}

func (h *hexReader) read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if h.done {
			return n, io.EOF
		}
		var digits [2]byte
		got := 0
		for got < 2 {
			c, err := h.r.ReadByte()
			if err == io.EOF || err == nil && c == '>' {
				h.done = true
				break
			}
			if err != nil {
				return n, err
			}
			switch {
			case isSpace(c):
				continue
			case '0' <= c && c <= '9':
				digits[got] = c - '0'
			case 'a' <= c && c <= 'f':
				digits[got] = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				digits[got] = c - 'A' + 10
			default:
				return n, fmt.Errorf("ASCIIHexDecode: byte %#02x is not a hexadecimal digit", c)
			}
			got++
		}
		if got == 0 {
			continue
		}
		b[n] = digits[0]<<4 | digits[1]
		n++
	}
	return n, nil
}

// runLengthReader decodes RunLengthDecode: a length byte L of 0 to 127 is
// followed by L+1 bytes to copy, 129 to 255 by one byte to repeat 257-L
// times, and 128 is the end of the data (as is the end of the stream).
type runLengthReader struct {
	r      *bufio.Reader
	copies int  // bytes still to copy from the input
	repeat int  // times still to write c
	c      byte // the byte being repeated
	done   bool
	err    error // the first error, returned from then on
}

func (r *runLengthReader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.read(b)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

func (r *runLengthReader) read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		switch {
		case r.repeat > 0:
			m := min(r.repeat, len(b)-n)
			for i := range m {
				b[n+i] = r.c
			}
			n += m
			r.repeat -= m
			continue
		case r.copies > 0:
			m, err := r.r.Read(b[n : n+min(r.copies, len(b)-n)])
			n += m
			r.copies -= m
			if err == io.EOF {
				return n, fmt.Errorf("RunLengthDecode: data ends inside a run of %d bytes", r.copies)
			}
			if err != nil {
				return n, err
			}
			continue
		case r.done:
			return n, io.EOF
		}
		l, err := r.r.ReadByte()
		if err == io.EOF || err == nil && l == 128 {
			r.done = true
			continue
		}
		if err != nil {
			return n, err
		}
		if l < 128 {
			r.copies = int(l) + 1
			continue
		}
		c, err := r.r.ReadByte()
		if err == io.EOF {
			return n, errors.New("RunLengthDecode: data ends before the byte to repeat")
		}
		if err != nil {
			return n, err
		}
		r.c, r.repeat = c, 257-int(l)
	}
	return n, nil
}

// predictor undoes the predictor of a FlateDecode or LZWDecode stream
// (PDF 32000-1 §7.4.4.4): 1 (or none) is no prediction, 2 is TIFF
// predictor 2, 10 to 15 are the PNG predictors, each row tagged with its
// own filter. /Colors, /BitsPerComponent and /Columns give the bytes of a
// pixel and of a row.
func predictor(rd io.Reader, param Value) io.Reader {
	pred := param.Key("Predictor")
	if pred.Kind() == Null {
		return rd
	}
	p := pred.Int64()
	if pred.Kind() != Integer || p != 1 && p != 2 && (p < 10 || p > 15) {
		panic(fmt.Errorf("unsupported predictor %v", pred))
	}
	if p == 1 {
		return rd
	}
	colors := intParam(param, "Colors", 1)
	if colors < 1 || colors > maxPredictorColors {
		panic(fmt.Errorf("malformed PDF: predictor /Colors %d outside 1..%d", colors, maxPredictorColors))
	}
	bpc := intParam(param, "BitsPerComponent", 8)
	switch bpc {
	case 1, 2, 4, 8, 16:
	default:
		panic(fmt.Errorf("malformed PDF: predictor /BitsPerComponent %d is not 1, 2, 4, 8 or 16", bpc))
	}
	columns := intParam(param, "Columns", 1)
	if columns < 1 || columns > maxPredictorColumns {
		panic(fmt.Errorf("malformed PDF: predictor /Columns %d outside 1..%d", columns, maxPredictorColumns))
	}
	row := (colors*bpc*columns + 7) / 8
	if row > maxPredictorRow {
		panic(fmt.Errorf("malformed PDF: predictor row of %d bytes (at most %d)", row, maxPredictorRow))
	}
	pr := &predictorReader{
		r:      rd,
		png:    p >= 10,
		colors: int(colors),
		bpc:    int(bpc),
		bpp:    int((colors*bpc + 7) / 8),
		comps:  int(colors * columns),
		prev:   make([]byte, row),
		cur:    make([]byte, row),
	}
	if pr.png {
		pr.in = make([]byte, 1+row)
	} else {
		pr.in = make([]byte, row)
	}
	return pr
}

// intParam is the integer param[key], or def if it is missing.
func intParam(param Value, key string, def int64) int64 {
	v := param.Key(key)
	if v.Kind() == Null {
		return def
	}
	if v.Kind() != Integer {
		panic(fmt.Errorf("malformed PDF: predictor /%s %v is not an integer", key, v))
	}
	return v.Int64()
}

// predictorReader undoes a predictor row by row; a short final row is
// decoded as far as it goes.
type predictorReader struct {
	r           io.Reader
	png         bool
	colors, bpc int
	bpp         int    // bytes per pixel, at least 1
	comps       int    // components in a row
	in          []byte // one encoded row (with its PNG filter byte)
	prev, cur   []byte // the previous and current decoded rows
	pend        []byte // decoded bytes not yet returned
	err         error
}

func (p *predictorReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if len(p.pend) > 0 {
			m := copy(b[n:], p.pend)
			n += m
			p.pend = p.pend[m:]
			continue
		}
		if p.err != nil {
			return n, p.err
		}
		m, err := readRow(p.r, p.in)
		if m == 0 && err == io.EOF {
			return n, io.EOF
		}
		if err != nil && err != io.EOF {
			p.err = err
			return n, err
		}
		p.err = err
		if p.png {
			if e := p.pngRow(m); e != nil {
				p.err = e
				return n, e
			}
		} else {
			p.tiffRow(m)
		}
	}
	return n, nil
}

// readRow reads a whole row, or at the end of the data the bytes left
// (with io.EOF); an error of the data below is returned as it is.
func readRow(r io.Reader, row []byte) (int, error) {
	m, empty := 0, 0
	for m < len(row) {
		k, err := r.Read(row[m:])
		m += k
		if err != nil {
			return m, err
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty >= 100 {
			return m, io.ErrNoProgress
		}
	}
	return m, nil
}

// pngRow decodes one PNG row of m bytes read (its filter byte first).
func (p *predictorReader) pngRow(m int) error {
	if m < 1 {
		return io.EOF
	}
	p.prev, p.cur = p.cur, p.prev
	cur, prev, in, bpp := p.cur[:m-1], p.prev, p.in[1:m], p.bpp
	switch p.in[0] {
	case 0: // None
		copy(cur, in)
	case 1: // Sub
		for i := range in {
			var left byte
			if i >= bpp {
				left = cur[i-bpp]
			}
			cur[i] = in[i] + left
		}
	case 2: // Up
		for i := range in {
			cur[i] = in[i] + prev[i]
		}
	case 3: // Average
		for i := range in {
			var left byte
			if i >= bpp {
				left = cur[i-bpp]
			}
			cur[i] = in[i] + byte((int(left)+int(prev[i]))/2)
		}
	case 4: // Paeth
		for i := range in {
			var left, upLeft byte
			if i >= bpp {
				left, upLeft = cur[i-bpp], prev[i-bpp]
			}
			cur[i] = in[i] + paeth(left, prev[i], upLeft)
		}
	default:
		return fmt.Errorf("malformed PDF: PNG predictor row filter %d", p.in[0])
	}
	p.pend = cur
	return nil
}

// paeth is the PNG Paeth predictor of a pixel from the pixels to its left,
// above, and above left.
func paeth(a, b, c byte) byte {
	pa := abs(int(b) - int(c))
	pb := abs(int(a) - int(c))
	pc := abs(int(a) + int(b) - 2*int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// tiffRow decodes one row of m bytes under TIFF predictor 2: each
// component is the difference from the same component of the pixel to its
// left, modulo 2^bpc.
func (p *predictorReader) tiffRow(m int) {
	row := p.cur[:m]
	copy(row, p.in[:m])
	c := p.colors
	switch p.bpc {
	case 8:
		for i := c; i < m; i++ {
			row[i] += row[i-c]
		}
	case 16:
		for i := 2 * c; i+1 < m; i += 2 {
			v := uint16(row[i])<<8 | uint16(row[i+1])
			v += uint16(row[i-2*c])<<8 | uint16(row[i-2*c+1])
			row[i], row[i+1] = byte(v>>8), byte(v)
		}
	default: // 1, 2 or 4 bits a component
		bits := p.bpc
		mask := byte(1<<bits - 1)
		comps := min(p.comps, m*8/bits)
		get := func(k int) byte {
			bit := k * bits
			return row[bit/8] >> (8 - bits - bit%8) & mask
		}
		for k := c; k < comps; k++ {
			bit := k * bits
			shift := 8 - bits - bit%8
			v := (get(k) + get(k-c)) & mask
			row[bit/8] = row[bit/8]&^(mask<<shift) | v<<shift
		}
	}
	p.pend = row
}

// decodedReader counts the bytes a filter decodes against the Reader's
// decoded-bytes budget (every filter of every stream, the intermediate
// ones of a chain included).
type decodedReader struct {
	r io.Reader
	g *guard
}

func (d *decodedReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	d.g.decoded(int64(n))
	return n, err
}
