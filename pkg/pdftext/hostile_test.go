package pdftext_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
	"github.com/pramaan/brief-rail/pkg/pdftext/worker"
)

// The bounds every hostile shape must end within, with the default limits.
// Under the race detector (make test) the code runs several times slower,
// so the wall bound is tripled there: each shape must still end by itself,
// by its own limits, before the child is killed.
const shapeMemory = 512 << 20

var shapeWall = map[bool]time.Duration{false: 30 * time.Second, true: 90 * time.Second}[raceEnabled]

const (
	shapeEnv   = "PDFTEXT_HOSTILE_SHAPE"
	shapeLimit = "PDFTEXT_HOSTILE_TIME" // a time limit for the child's extraction
	shortLimit = 2 * time.Second        // the shortest limit
	shortSlack = 3 * time.Second        // what a loaded machine may add to it
)

// shapeResult is what the child process reports about one extraction.
type shapeResult struct {
	Err     string
	Typed   bool
	Pages   int
	Bytes   int
	PeakRSS int64
	Seconds float64
	Size    int
}

var typedErrors = []error{pdftext.ErrNotPDF, pdftext.ErrCorrupt, pdftext.ErrEncrypted, pdftext.ErrEmpty, pdftext.ErrTooLarge}

func isTyped(err error) bool {
	for _, e := range typedErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// TestHostileShapes extracts every hostile shape in a child process (this
// test binary again) whose address space is capped at 512 MiB over its
// start-up size and which is killed after 30 s: each must end by itself,
// with a typed error or text, inside both, with the default limits; and
// with a 2-second time limit it must end within the limit (plus slack for
// a loaded machine), because the deadline is checked where the work is
// done. On the parser as it was, the child dies of "out of memory", runs
// past the deadline, or uses gigabytes.
func TestHostileShapes(t *testing.T) {
	if name := os.Getenv(shapeEnv); name != "" {
		t.Skip("child mode")
	}
	for _, s := range pdftexttest.Hostile() {
		t.Run(s.Name, func(t *testing.T) {
			res, out, err := runShapeChild(t, s.Name, shortLimit)
			if err != nil {
				t.Fatalf("%s (%s), %v limit: the extraction did not end by itself: %v\n%s", s.Name, s.What, shortLimit, err, tail(out))
			}
			if res.Err != "" && !res.Typed {
				t.Errorf("%v limit: untyped error: %s", shortLimit, res.Err)
			}
			if d := time.Duration(res.Seconds * float64(time.Second)); d > shortLimit+shortSlack {
				t.Errorf("with a %v limit, extraction took %v (err=%q)", shortLimit, d, res.Err)
			}
			res, out, err = runShapeChild(t, s.Name, 0)
			if err != nil {
				t.Fatalf("%s (%s): the extraction did not end by itself: %v\n%s", s.Name, s.What, err, tail(out))
			}
			t.Logf("%s: %d bytes in, %.2f s, peak RSS %d MiB, err=%q pages=%d text=%d", s.Name, res.Size, res.Seconds, res.PeakRSS>>20, res.Err, res.Pages, res.Bytes)
			if res.Err != "" && !res.Typed {
				t.Errorf("untyped error: %s", res.Err)
			}
			if res.PeakRSS > shapeMemory {
				t.Errorf("peak RSS %d MiB, over %d MiB", res.PeakRSS>>20, shapeMemory>>20)
			}
		})
	}
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

func runShapeChild(t *testing.T, name string, limit time.Duration) (shapeResult, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), shapeWall)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileShapeChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), shapeEnv+"="+name, shapeLimit+"="+limit.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return shapeResult{}, out.Bytes(), fmt.Errorf("still running after %v (killed)", shapeWall)
	}
	if err != nil {
		return shapeResult{}, out.Bytes(), fmt.Errorf("child failed: %v", err)
	}
	i := bytes.Index(out.Bytes(), []byte("SHAPE-RESULT "))
	if i < 0 {
		return shapeResult{}, out.Bytes(), errors.New("child printed no result")
	}
	line := out.Bytes()[i+len("SHAPE-RESULT "):]
	line = line[:bytes.IndexByte(line, '\n')]
	var res shapeResult
	if err := json.Unmarshal(line, &res); err != nil {
		return shapeResult{}, out.Bytes(), err
	}
	return res, out.Bytes(), nil
}

// TestHostileShapeChild is the child of TestHostileShapes.
func TestHostileShapeChild(t *testing.T) {
	name := os.Getenv(shapeEnv)
	if name == "" {
		t.Skip("run by TestHostileShapes")
	}
	var data []byte
	for _, s := range pdftexttest.Hostile() {
		if s.Name == name {
			data = s.Make()
		}
	}
	if data == nil {
		t.Fatalf("no shape %q", name)
	}
	if err := worker.LimitAddressSpace(shapeMemory); err != nil {
		t.Fatalf("address-space limit: %v", err)
	}
	limit, err := time.ParseDuration(os.Getenv(shapeLimit))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	doc, err := pdftext.ExtractContext(context.Background(), data, pdftext.Limits{Time: limit})
	res := shapeResult{Size: len(data), Seconds: time.Since(start).Seconds(), PeakRSS: worker.PeakRSS(), Pages: len(doc.Pages)}
	if err != nil {
		res.Err, res.Typed = err.Error(), isTyped(err)
	}
	for _, p := range doc.Pages {
		res.Bytes += len(p)
	}
	j, _ := json.Marshal(res)
	fmt.Printf("SHAPE-RESULT %s\n", j)
}

// The hand-written deflate streams inflate to exactly their segments.
func TestDeflateGenerator(t *testing.T) {
	segs := []pdftexttest.Seg{
		{Pattern: []byte("<< >> begin\n"), Count: 1000}, {Pattern: []byte("x"), Count: 70000},
		{Pattern: []byte{0xfe, 0x00, 'q'}, Count: 333}, {Pattern: []byte("0 "), Count: 1},
	}
	var want bytes.Buffer
	for _, s := range segs {
		want.Write(bytes.Repeat(s.Pattern, int(s.Count)))
	}
	zr, err := zlib.NewReader(bytes.NewReader(pdftexttest.Deflate(segs...)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("inflated %d bytes, want %d", len(got), want.Len())
	}
}

// Every shape is a small file.
func TestHostileShapesAreSmall(t *testing.T) {
	for _, s := range pdftexttest.Hostile() {
		if n := len(s.Make()); n > 4<<20 {
			t.Errorf("%s: %d bytes", s.Name, n)
		}
	}
}
