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

// resolve returns the configuration to use after the flags are parsed and
// prints it. A bad variable or flag is a usage error naming it.
func (o *opConfig) resolve(g *globals) (rail.Config, error) {
	c, err := lambdafn.LoadOperatorConfig(g.env)
	if err != nil {
		return rail.Config{}, usageError("%v", err)
	}
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
		return rail.Config{}, bad
	}
	fmt.Fprintf(g.stderr, "config: lease=%s (%s) max_attempts=%d (%s)\n", c.Lease, leaseFrom, c.MaxAttempts, maxFrom)
	return c.RailConfig(), nil
}

// env reads the environment (os.Getenv unless a test set its own).
func (g *globals) env(key string) string {
	if g.getenv != nil {
		return g.getenv(key)
	}
	return os.Getenv(key)
}
