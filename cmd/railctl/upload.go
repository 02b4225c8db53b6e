package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/record"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// cmdUpload extracts and stores PDFs on a matter, all or nothing
// (record.Upload), and prints what it stored.
func cmdUpload(ctx context.Context, g *globals, args []string) error {
	c := g.flags("upload", "--firm F --matter M FILE.pdf...", withMatter|withArgs)
	maxDecoded := c.Int64("max-decoded-mib", pdftext.MaxDecoded>>20, "limit on each PDF's decompressed content, in MiB (a decompression bomb stops here)")
	s, err := c.open(ctx, args, func() error {
		if c.NArg() == 0 {
			return usageError("upload: name at least one PDF file")
		}
		if *maxDecoded <= 0 {
			return usageError("upload: --max-decoded-mib must be positive")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	// With X-Ray on, the upload is a trace of its own that the rail carries
	// to the build and its frame.built fact; otherwise ctx's trace, if any.
	ctx, end := tracing.StartSegment(ctx, "railctl upload")
	stored, err := record.Upload(ctx, s.pool, s.ref, c.Args(), pdftext.Limits{Decoded: *maxDecoded << 20})
	end(err)
	if err != nil {
		return fmt.Errorf("nothing uploaded:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	for _, s := range stored {
		fmt.Fprintf(g.stdout, "uploaded %s: document %s, %d page(s)", s.Name, s.ID, s.Pages)
		if s.Note != "" {
			fmt.Fprintf(g.stdout, " — note: %s", s.Note)
		}
		fmt.Fprintln(g.stdout)
	}
	return nil
}
