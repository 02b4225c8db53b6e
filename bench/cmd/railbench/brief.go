package main

// The extractive Brief's speed and memory: build time for matters of 100,
// 300 and 900 pages (linear in pages when the per-page time stays flat),
// and the peak RSS of a child process that builds the 300-page Brief,
// against a child that only loads the same input (the baseline).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/pdftext"
)

// BriefResults is the "brief" section.
type BriefResults struct {
	Corpus       string       `json:"corpus"`
	CorpusPages  int          `json:"corpus_pages"`
	Sizes        []BriefSize  `json:"sizes"`
	Linearity    float64      `json:"per_page_ratio_900_vs_100"`     // per-page wall time at 900 pages / at 100 pages
	LinearityCPU float64      `json:"per_page_cpu_ratio_900_vs_100"` // the same in CPU time
	RSS          *BriefRSSRun `json:"rss_300_pages,omitempty"`
}

// BriefSize is the build time of one matter size.
type BriefSize struct {
	Pages      int       `json:"pages"`
	Documents  int       `json:"documents"`
	Ms         []float64 `json:"ms"`
	MedianMs   float64   `json:"median_ms"`
	CPUMs      []float64 `json:"cpu_ms"` // user+system CPU time of the process during the build
	MedianCPU  float64   `json:"median_cpu_ms"`
	PerPageUs  float64   `json:"per_page_us"`     // wall
	PerPageCPU float64   `json:"per_page_cpu_us"` // CPU: less disturbed by other load on a shared machine
	Chronology int       `json:"chronology_entries"`
}

// BriefRSSRun compares peak RSS of two child processes over the same input.
type BriefRSSRun struct {
	LoadOnlyKB int64 `json:"load_only_peak_rss_kb"`
	BuildKB    int64 `json:"build_peak_rss_kb"`
}

const briefChildEnv = "RAILBENCH_BRIEF_CHILD"

// briefCorpus is where the real filings are, relative to bench/.
var briefCorpus = filepath.Join("..", "testdata", "filings")

func init() {
	// A child process for the RSS measurement: load (and build) a matter of
	// the given size, then exit.
	v := os.Getenv(briefChildEnv)
	if v == "" {
		return
	}
	// v is "load:PATH" or "build:PATH": PATH holds the matter's input as
	// JSON, so that both children do the same work apart from the build.
	mode, path, _ := strings.Cut(v, ":")
	var in brief.Input
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &in)
	}
	if err == nil && mode == "build" {
		_, err = brief.NewExtractive().Build(context.Background(), in)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The process's own high-water mark: getrusage's ru_maxrss of a child
	// starts from its parent's RSS at fork on Linux, VmHWM of the new image
	// does not.
	fmt.Println(vmHWM())
	os.Exit(0)
}

// vmHWM is the peak resident set of this process image in KB, from
// /proc/self/status, or -1.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err == nil {
				return kb
			}
		}
	}
	return -1
}

var pagePool [][]string // pages of each corpus document, read once

// briefMatter assembles a matter of at least pages pages from copies of the
// real filings (each copy a document with its own id), in a fixed order.
func briefMatter(pages int) (brief.Input, int, error) {
	if pagePool == nil {
		files, err := filepath.Glob(filepath.Join(briefCorpus, "*.pdf"))
		if err != nil || len(files) == 0 {
			return brief.Input{}, 0, fmt.Errorf("no filings under %s", briefCorpus)
		}
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return brief.Input{}, 0, err
			}
			doc, err := pdftext.Extract(data)
			if err != nil {
				continue
			}
			pagePool = append(pagePool, doc.Pages)
		}
	}
	in := brief.Input{FirmID: "6f1c2b7e-3d4a-4c55-9a0e-1b2c3d4e5f60", MatterID: "0b9e8d7c-6a5b-4c3d-8e2f-112233445566", Title: "bench"}
	total := 0
	for i := 0; total < pages; i++ {
		p := pagePool[i%len(pagePool)]
		in.Documents = append(in.Documents, brief.Document{
			ID:     fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, i+1),
			Name:   fmt.Sprintf("doc-%04d.pdf", i+1),
			SHA256: fmt.Sprintf("%064x", i+1),
			Pages:  p,
		})
		total += len(p)
	}
	return in, total, nil
}

func runBrief(ctx context.Context, o options) (*BriefResults, error) {
	res := &BriefResults{Corpus: briefCorpus}
	if _, _, err := briefMatter(0); err != nil {
		return nil, err
	}
	for _, p := range pagePool {
		res.CorpusPages += len(p)
	}
	reps := max(o.Reps, 3)
	for _, size := range []int{100, 300, 900} {
		in, pages, err := briefMatter(size)
		if err != nil {
			return nil, err
		}
		s := BriefSize{Pages: pages, Documents: len(in.Documents)}
		for r := 0; r < reps; r++ {
			cpu0 := cpuTime()
			began := time.Now()
			b, err := brief.NewExtractive().Build(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("build %d pages: %w", pages, err)
			}
			s.Ms = append(s.Ms, ms(time.Since(began)))
			s.CPUMs = append(s.CPUMs, ms(cpuTime()-cpu0))
			s.Chronology = len(b.Chronology)
		}
		s.MedianMs, s.MedianCPU = median(s.Ms), median(s.CPUMs)
		s.PerPageUs = 1000 * s.MedianMs / float64(pages)
		s.PerPageCPU = 1000 * s.MedianCPU / float64(pages)
		logf("brief: %d pages in %d documents: median %.0f ms wall, %.0f ms CPU (%.0f µs CPU/page) of %d", pages, len(in.Documents), s.MedianMs, s.MedianCPU, s.PerPageCPU, reps)
		res.Sizes = append(res.Sizes, s)
	}
	res.Linearity = res.Sizes[2].PerPageUs / res.Sizes[0].PerPageUs
	res.LinearityCPU = res.Sizes[2].PerPageCPU / res.Sizes[0].PerPageCPU

	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	in, _, err := briefMatter(300)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "railbench-brief-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := json.NewEncoder(tmp).Encode(in); err != nil {
		return nil, err
	}
	tmp.Close()
	child := func(mode string) (int64, error) {
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), briefChildEnv+"="+mode+":"+tmp.Name())
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("child %s: %w", mode, err)
		}
		var kb int64
		if _, err := fmt.Sscan(string(out), &kb); err != nil || kb < 0 {
			return 0, fmt.Errorf("child %s: no VmHWM (%q)", mode, out)
		}
		return kb, nil
	}
	var load, build []float64
	for r := 0; r < 3; r++ {
		l, err := child("load")
		if err != nil {
			return nil, err
		}
		b, err := child("build")
		if err != nil {
			return nil, err
		}
		load, build = append(load, float64(l)), append(build, float64(b))
	}
	res.RSS = &BriefRSSRun{LoadOnlyKB: int64(median(load)), BuildKB: int64(median(build))}
	logf("brief: 300 pages: peak RSS %d KB building, %d KB only loading the input", res.RSS.BuildKB, res.RSS.LoadOnlyKB)
	return res, nil
}
