package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/pramaan/brief-rail/pkg/pdftext"
	"github.com/pramaan/brief-rail/pkg/record"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// cmdUpload extracts and stores PDFs on a matter, all or nothing
// (record.Upload), and prints what it stored.
func cmdUpload(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "upload", "--firm F --matter M FILE.pdf...")
	mf := addMatterFlags(fs)
	maxDecoded := fs.Int64("max-decoded-mib", pdftext.MaxDecoded>>20, "limit on each PDF's decompressed content, in MiB (a decompression bomb stops here)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError("%v", err)
	}
	ref, err := mf.ref()
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("upload: name at least one PDF file")
	}
	if *maxDecoded <= 0 {
		return usageError("upload: --max-decoded-mib must be positive")
	}
	lim := pdftext.Limits{Decoded: *maxDecoded << 20}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	// With X-Ray on, the upload is a trace of its own that the rail carries
	// to the build and its frame.built fact; otherwise ctx's trace, if any.
	ctx, end := tracing.StartSegment(ctx, "railctl upload")
	stored, err := record.Upload(ctx, pool, ref, fs.Args(), lim)
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
