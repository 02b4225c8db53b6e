package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// opConfig is the ledger configuration of an operator command that acts on
// the deployed rail's rows (sweep, build, status). It is read the way the
// functions read theirs (lambdafn.LoadOperatorConfig: RAIL_LEASE,
// RAIL_MAX_ATTEMPTS with the same defaults and ranges), then the command's
// flags override it. The values used are printed on stderr, each with
// where it came from, so an operator sees at once when they differ from
// the deployment's.
type opConfig struct {
	fs          *flag.FlagSet
	lease       *time.Duration
	maxAttempts *int
}

func addOpConfig(fs *flag.FlagSet) *opConfig {
	return &opConfig{
		fs: fs,
		lease: fs.Duration("lease", 0, "lease: a claim older than this may be taken over "+
			"(default $"+lambdafn.EnvLease+", else "+rail.DefaultLease.String()+")"),
		maxAttempts: fs.Int("max-attempts", 0, "attempts before quarantine "+
			fmt.Sprintf("(default $%s, else %d)", lambdafn.EnvMaxAttempts, rail.DefaultMaxAttempts)),
	}
}

// apply puts the flags given over c, the deployed configuration, then
// on-call's (when oc is not nil), and prints the lease and attempt limit
// used. A bad flag is a usage error naming it.
func (o *opConfig) apply(g *globals, c *lambdafn.Config, oc *onCallFlags) error {
	leaseFrom, maxFrom := c.Sources[lambdafn.EnvLease], c.Sources[lambdafn.EnvMaxAttempts]
	var bad error
	o.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "lease":
			if *o.lease <= 0 {
				bad = usageError("--lease=%s: want a positive duration", *o.lease)
			}
			c.Lease, leaseFrom = *o.lease, "--lease"
		case "max-attempts":
			if *o.maxAttempts < 1 || *o.maxAttempts > 100 {
				bad = usageError("--max-attempts=%d: want an integer from 1 to 100", *o.maxAttempts)
			}
			c.MaxAttempts, maxFrom = *o.maxAttempts, "--max-attempts"
		}
	})
	if bad != nil {
		return bad
	}
	if oc != nil {
		if err := oc.apply(c); err != nil {
			return err
		}
	}
	fmt.Fprintf(g.stderr, "config: lease=%s (%s) max_attempts=%d (%s)\n", c.Lease, leaseFrom, c.MaxAttempts, maxFrom)
	return nil
}

// onCallFlags are the settings a diagnosis is judged with, over the
// deployed configuration (RAIL_SETTLE_DELAY, RAIL_BRIEF_BUILDER,
// RAIL_BEDROCK_MODEL_ID, RAIL_BACKFILL_RATE, RAIL_BACKFILL_CONCURRENCY),
// each overridden by its flag when given.
type onCallFlags struct {
	fs      *flag.FlagSet
	settle  *time.Duration
	builder *string
	model   *string
	rate    *string
	conc    *int
}

func addOnCallFlags(fs *flag.FlagSet) *onCallFlags {
	return &onCallFlags{
		fs:      fs,
		settle:  fs.Duration("settle", 0, "the trigger's settle delay (default $"+lambdafn.EnvSettleDelay+", else 10s)"),
		builder: fs.String("builder", "", "the deployed builder: extractive, bedrock or digest (default $"+lambdafn.EnvBriefBuilder+", else extractive)"),
		model:   fs.String("model", "", "the deployed Bedrock model id (default $"+lambdafn.EnvBedrockModelID+")"),
		rate: fs.String("rate", "", fmt.Sprintf("backfill builds per minute, more than 0 (default $%s, else %d)",
			lambdafn.EnvBackfillRate, lambdafn.DefaultBackfillRate)),
		conc: fs.Int("concurrency", 0, fmt.Sprintf("the backfill builders' concurrency, the backfill queue's MaximumConcurrency (default $%s, else %d)",
			lambdafn.EnvBackfillConcurrency, rail.DefaultBackfillConcurrency)),
	}
}

// apply puts the on-call flags given over c.
func (o *onCallFlags) apply(c *lambdafn.Config) error {
	var bad error
	o.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "settle":
			if *o.settle < 0 {
				bad = usageError("--settle=%s: want a duration of 0 or more", *o.settle)
			}
			c.SettleDelay = *o.settle
		case "builder":
			c.BriefBuilder = *o.builder
		case "model":
			c.BedrockModelID = *o.model
		case "rate":
			r, err := lambdafn.ParseBackfillRate(*o.rate)
			if err != nil {
				bad = usageError("--rate: %v", err)
			}
			c.BackfillRate = r
		case "concurrency":
			if *o.conc < 1 || *o.conc > 1000 {
				bad = usageError("--concurrency=%d: want an integer from 1 to 1000", *o.conc)
			}
			c.BackfillConcurrency = *o.conc
		}
	})
	return bad
}

// env reads the environment (os.Getenv unless a test set its own).
func (g *globals) env(key string) string {
	if g.getenv != nil {
		return g.getenv(key)
	}
	return os.Getenv(key)
}
