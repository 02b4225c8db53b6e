package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/pdftext/pdftexttest"
)

// ExtractResults is PDF text extraction (pkg/pdftext): pages per second on
// the real-filings corpus and on generated filings, whether time grows
// linearly with pages, and the peak RSS of a process extracting them.
type ExtractResults struct {
	CorpusFiles      int               `json:"corpus_files"`
	CorpusPages      int               `json:"corpus_pages"`
	CorpusPagesPerS  Series            `json:"corpus_pages_per_s"`
	CorpusPagesCPU   Series            `json:"corpus_pages_per_cpu_s"` // per second of process CPU time (user+sys), less sensitive to a busy machine
	Generated        map[string]Series `json:"generated_pages_per_s"`  // by page count
	GeneratedCPU     map[string]Series `json:"generated_pages_per_cpu_s"`
	LinearRatio      float64           `json:"per_page_cpu_time_ratio_900_vs_100"`
	PeakRSSCorpusMiB float64           `json:"peak_rss_corpus_mib"`
	PeakRSS300MiB    float64           `json:"peak_rss_300_pages_mib"`
	PeakRSSBaseMiB   float64           `json:"peak_rss_baseline_mib"` // the same child process extracting nothing
}

// extractSizes are the generated documents' page counts.
var extractSizes = []int{100, 300, 900}

func corpusFiles() ([][]byte, int, error) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "filings", "*.pdf"))
	if err != nil {
		return nil, 0, err
	}
	if len(paths) == 0 {
		return nil, 0, fmt.Errorf("no corpus PDFs under ../testdata/filings (run from bench/)")
	}
	sort.Strings(paths)
	var files [][]byte
	pages := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		doc, err := pdftext.Extract(data)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", p, err)
		}
		files = append(files, data)
		pages += len(doc.Pages)
	}
	return files, pages, nil
}

func runExtract(o options) (*ExtractResults, error) {
	files, pages, err := corpusFiles()
	if err != nil {
		return nil, err
	}
	r := &ExtractResults{CorpusFiles: len(files), CorpusPages: pages, Generated: map[string]Series{}, GeneratedCPU: map[string]Series{}}
	var corpus, corpusCPU []float64
	for rep := 0; rep < o.Reps; rep++ {
		t, c := time.Now(), cpuTime()
		for _, f := range files {
			if _, err := pdftext.Extract(f); err != nil {
				return nil, err
			}
		}
		corpus = append(corpus, float64(pages)/time.Since(t).Seconds())
		corpusCPU = append(corpusCPU, float64(pages)/(cpuTime()-c).Seconds())
	}
	r.CorpusPagesPerS = series("pages/s", corpus)
	r.CorpusPagesCPU = series("pages/cpu-s", corpusCPU)
	logf("extract: corpus %d files, %d pages: %.1f pages/s, %.1f pages/cpu-s (medians of %d)", len(files), pages, r.CorpusPagesPerS.Median, r.CorpusPagesCPU.Median, o.Reps)

	perPage := map[int]float64{}
	for _, n := range extractSizes {
		data := pdftexttest.Pages(n, pdftexttest.FilingPage)
		var xs, cs []float64
		for rep := 0; rep < o.Reps; rep++ {
			t, c := time.Now(), cpuTime()
			doc, err := pdftext.Extract(data)
			if err != nil {
				return nil, err
			}
			if len(doc.Pages) != n {
				return nil, fmt.Errorf("generated %d pages, extracted %d", n, len(doc.Pages))
			}
			xs = append(xs, float64(n)/time.Since(t).Seconds())
			cs = append(cs, float64(n)/(cpuTime()-c).Seconds())
		}
		s, sc := series("pages/s", xs), series("pages/cpu-s", cs)
		r.Generated[strconv.Itoa(n)] = s
		r.GeneratedCPU[strconv.Itoa(n)] = sc
		perPage[n] = 1 / sc.Median
		logf("extract: generated %d pages: %.1f pages/s, %.1f pages/cpu-s (medians of %d)", n, s.Median, sc.Median, o.Reps)
	}
	// Linearity from CPU time per page: wall time on a shared machine
	// mostly measures the neighbours.
	r.LinearRatio = round(perPage[900]/perPage[100], 3)

	for _, m := range []struct {
		what string
		dst  *float64
	}{{"none", &r.PeakRSSBaseMiB}, {"corpus", &r.PeakRSSCorpusMiB}, {"300", &r.PeakRSS300MiB}} {
		rss, err := childPeakRSS(m.what)
		if err != nil {
			return nil, fmt.Errorf("peak RSS (%s): %w", m.what, err)
		}
		*m.dst = round(rss, 1)
	}
	logf("extract: peak RSS %.1f MiB (corpus), %.1f MiB (300 pages), %.1f MiB (baseline)", r.PeakRSSCorpusMiB, r.PeakRSS300MiB, r.PeakRSSBaseMiB)
	return r, nil
}

// extractChildEnv makes railbench, re-executed, extract one thing and exit,
// so that its peak RSS is the extraction's alone.
const extractChildEnv = "RAILBENCH_EXTRACT_CHILD"

// childPeakRSS runs this binary as a child that extracts what ("corpus",
// "300" generated pages, or "none") and returns its peak RSS in MiB, as the
// child reads it from /proc/self/status (VmHWM) before exiting. (wait4's
// ru_maxrss would include the parent's RSS, which the child shares until
// it execs.)
func childPeakRSS(what string) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), extractChildEnv+"="+what)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, err
	}
	kib, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("child said %q: %w", out, err)
	}
	return kib / 1024, nil
}

// peakRSSKiB is this process's peak resident set (VmHWM), in KiB.
func peakRSSKiB() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "NaN"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		}
	}
	return "NaN"
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// extractChild is the child's work; it exits the process.
func extractChild(what string) {
	switch what {
	case "corpus":
		if _, _, err := corpusFiles(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "none":
	default:
		n, _ := strconv.Atoi(what)
		if _, err := pdftext.Extract(pdftexttest.Pages(n, pdftexttest.FilingPage)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Println(peakRSSKiB())
	os.Exit(0)
}
