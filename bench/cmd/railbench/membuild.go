package main

// Peak memory of one build over a large matter (issue 10: bounded builds).
// The parent seeds one matter with -mem-docs documents of -mem-pages pages
// of about -mem-page-bytes bytes each, then runs each mode in a child
// process of its own (railbench re-executed with RAILBENCH_MEMCHILD set)
// and reads the child's peak resident set (getrusage ru_maxrss) when it
// exits. Modes:
//
//	all-in-memory     the old path: every page of every document read in one
//	                  query into memory, then the digest builder (baseline)
//	stream-digest     postgres.LoadInputs (manifest) and the digest builder
//	                  reading one document at a time (what the worker does)
//	stream-extractive the same with the extractive Brief builder (three
//	                  passes over the documents); opt-in, it is slow

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

const (
	envMemChild = "RAILBENCH_MEMCHILD"     // mode
	envMemURL   = "RAILBENCH_MEMCHILD_URL" // database
	envMemRef   = "RAILBENCH_MEMCHILD_REF" // firm/matter
)

// memModes run by default. stream-extractive is opt-in (-mem-modes): the
// extractive builder takes about 9 ms per page on a 2-core machine, half an
// hour for 2,000 x 100 pages.
var memModes = []string{"all-in-memory", "stream-digest"}

// MemoryResults are the peak RSS figures, medians over -mem-reps.
type MemoryResults struct {
	Documents    int                   `json:"documents"`
	Pages        int                   `json:"pages_per_document"`
	PageBytes    int                   `json:"page_bytes"`
	TextMB       float64               `json:"text_mb"` // sum of page text lengths
	Modes        map[string]MemoryMode `json:"modes"`
	StreamRatio  float64               `json:"stream_digest_over_baseline"` // peak RSS ratio
	ExtractRatio float64               `json:"stream_extractive_over_baseline"`
}

type MemoryMode struct {
	PeakRSSMB []float64 `json:"peak_rss_mb"`
	MedianMB  float64   `json:"median_peak_rss_mb"`
	Seconds   []float64 `json:"seconds"`
}

// memChild runs one mode in this process and exits; the parent measures it.
func memChild(mode string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "memchild %s: %v\n", mode, err)
		os.Exit(1)
	}
	pool, err := pgxpool.New(ctx, os.Getenv(envMemURL))
	if err != nil {
		fail(err)
	}
	defer pool.Close()
	var firm, matter string
	if _, err := fmt.Sscanf(os.Getenv(envMemRef), "%36s %36s", &firm, &matter); err != nil {
		fail(err)
	}
	ref, err := rail.ParseMatterRef(firm, matter)
	if err != nil {
		fail(err)
	}
	var in rail.Inputs
	var b rail.FrameBuilder = rail.DigestBuilder{}
	switch mode {
	case "all-in-memory":
		rows, err := pool.Query(ctx, `SELECT document_id, name, pages, content_sha256, note, uploaded_at
            FROM app.documents WHERE firm_id = $1 AND matter_id = $2 ORDER BY uploaded_at, document_id`, ref.FirmID, ref.MatterID)
		if err != nil {
			fail(err)
		}
		docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.Document, error) {
			var d rail.Document
			err := r.Scan(&d.ID, &d.Name, &d.Pages, &d.SHA256, &d.Note, &d.UploadedAt)
			return d, err
		})
		if err != nil {
			fail(err)
		}
		in = rail.NewInputs(ref, "memory bench", docs)
	case "stream-digest", "stream-extractive":
		if in, err = postgres.LoadInputs(ctx, pool, ref); err != nil {
			fail(err)
		}
		if mode == "stream-extractive" {
			b = brief.ForRail(brief.NewExtractive())
		}
	default:
		fail(fmt.Errorf("unknown mode"))
	}
	body, err := b.Build(ctx, in)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%d\n", len(body))
	os.Exit(0)
}

func runMemory(ctx context.Context, e *env, o options) (*MemoryResults, error) {
	pool, err := e.pool(ctx, 4, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	refs, err := createMatters(ctx, pool, 1, "memory bench")
	if err != nil {
		return nil, err
	}
	ref := refs[0]
	res := &MemoryResults{Documents: o.MemDocs, Pages: o.MemPages, PageBytes: o.MemPageBytes, Modes: map[string]MemoryMode{}}
	logf("memory: seeding %d documents x %d pages x ~%d bytes", o.MemDocs, o.MemPages, o.MemPageBytes)
	// Each page: a dated, asserting sentence naming a party (so the
	// extractive builder finds events, assertions and mentions on every
	// page) and a unique hash, then plain prose lines to the page size.
	for from := 1; from <= o.MemDocs; from += 100 {
		to := min(from+99, o.MemDocs)
		if _, err := pool.Exec(ctx, `
INSERT INTO app.documents (document_id, firm_id, matter_id, name, pages, content_sha256)
SELECT gen_random_uuid(), $1, $2, 'doc-' || lpad(g::text, 5, '0') || '.pdf',
       ARRAY(SELECT 'On March 3, 2024, Plaintiff Harlow Logistics Ltd alleges that page ' || p || ' of document ' || g
                    || ' (' || md5(g::text || ':' || p::text) || ').' || E'\n'
                    || repeat('Counsel reviewed the freight invoices and the delivery records. ' || E'\n',
                              greatest(($5::int - 140) / 64, 1))
             FROM generate_series(1, $4::int) p),
       encode(sha256(convert_to('doc ' || g, 'UTF8')), 'hex')
FROM generate_series($3::int, $6::int) g`, ref.FirmID, ref.MatterID, from, o.MemPages, o.MemPageBytes, to); err != nil {
			return nil, fmt.Errorf("seed documents: %w", err)
		}
	}
	var textBytes int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(length(p)), 0) FROM app.documents, unnest(pages) p
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID).Scan(&textBytes); err != nil {
		return nil, err
	}
	res.TextMB = float64(textBytes) / (1 << 20)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	modes := memModes
	if o.MemModes != "" {
		modes = strings.Split(o.MemModes, ",")
	}
	for rep := 0; rep < o.MemReps; rep++ {
		for _, mode := range modes {
			cmd := exec.CommandContext(ctx, self)
			cmd.Env = append(os.Environ(), envMemChild+"="+mode, envMemURL+"="+e.url(e.benchDB),
				envMemRef+"="+ref.FirmID.String()+" "+ref.MatterID.String())
			cmd.Stderr = os.Stderr
			start := time.Now()
			out, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("memory %s: %w", mode, err)
			}
			secs := time.Since(start).Seconds()
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				return nil, fmt.Errorf("memory %s: no rusage on this platform", mode)
			}
			mb := float64(ru.Maxrss) / 1024 // Linux: kilobytes
			m := res.Modes[mode]
			m.PeakRSSMB = append(m.PeakRSSMB, mb)
			m.Seconds = append(m.Seconds, secs)
			res.Modes[mode] = m
			logf("memory %s rep %d: peak RSS %.1f MB, %.1fs, body %s bytes", mode, rep+1, mb, secs, trimNL(out))
		}
	}
	for mode, m := range res.Modes {
		m.MedianMB = medianOf(m.PeakRSSMB)
		res.Modes[mode] = m
	}
	if base := res.Modes["all-in-memory"].MedianMB; base > 0 {
		res.StreamRatio = res.Modes["stream-digest"].MedianMB / base
		res.ExtractRatio = res.Modes["stream-extractive"].MedianMB / base
	}
	return res, nil
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func trimNL(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
