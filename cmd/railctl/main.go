// Command railctl is the Brief rail's operator tool and local runner.
//
//	railctl [--database-url URL] <command> [flags]
//
// Run `railctl help` for the commands. Exit codes: 0 success, 1 error,
// 2 usage; `build` adds 3 (fenced: stale token, nothing landed) and 4
// (nothing to claim); `why` adds 5 (unknown matter, or another firm's).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// Exit codes.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitFenced  = 3
	exitNothing = 4
	// exitNotFound: why on an unknown matter, or one filed under another firm.
	exitNotFound = 5
)

// exitError carries a specific exit code out of a command.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

func withCode(code int, format string, args ...any) error {
	return &codeError{code: code, err: fmt.Errorf(format, args...)}
}

// usageError marks bad invocation (exit 2).
func usageError(format string, args ...any) error { return withCode(exitUsage, format, args...) }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, g *globals, args []string) error
}

type globals struct {
	databaseURL string
	stdout      io.Writer
	stderr      io.Writer
	getenv      func(string) string // the environment; nil: os.Getenv
	root        string              // the clone; "": found from the working directory
	// beforeCommit, when set (tests), runs in `build` just before the
	// commit, after any --stall, with heartbeats stopped: a stall that ends
	// on a condition instead of after a time.
	beforeCommit func(ctx context.Context, c rail.Claim)
}

func commands() []command {
	return []command{
		{"migrate", "apply the schema migrations", cmdMigrate},
		{"matter", "matter add|close|open: manage matters", cmdMatter},
		{"doc", "doc add: store a text document on a matter", cmdDoc},
		{"upload", "extract and store PDFs on a matter (all or nothing), recording document.uploaded", cmdUpload},
		{"brief", "print a matter's current Brief (newest frame) and whether it is current", cmdBrief},
		{"demand", "record one demand for a matter's Brief (what the trigger does)", cmdDemand},
		{"build", "claim, build and commit a matter's Brief once", cmdBuild},
		{"status", "show a matter's ledger row and whether its Brief is current", cmdStatus},
		{"runs", "list a matter's recent build attempts", cmdRuns},
		{"sweep", "one sweeper pass: quarantine, expiries, unserved demand", cmdSweep},
		{"release", "return a quarantined matter to idle", cmdRelease},
		{"stale", "the stalest matters, each with its age and why it is behind (or outdated)", cmdStale},
		{"why", "one matter's causal chain, oldest first, ending in a verdict", cmdWhy},
		{"backfill", "backfill status|pause|resume, or --dry-run: rebuild outdated matters at a bounded rate", cmdBackfill},
		{"regenerate", "record brief.regeneration_requested for a matter (the Regenerate button)", cmdRegenerate},
		{"emit", "record any fact by hand (a lowercase past-tense noun.verb)", cmdEmit},
		{"relay", "drain the outbox onto EventBridge (RAIL_EVENT_BUS, AWS_ENDPOINT_URL)", cmdRelay},
		{"outbox", "outbox parked|unpark|lease: list parked facts with their reasons, release them, or show who holds the relay lease", cmdOutbox},
		{"dev", "run relay, trigger, builder and sweeper locally until interrupted (make serve)", cmdDev},
		{"run", "run the local rail and play the quickstart: three PDFs -> a Brief (make run)", cmdRun},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, os.Getenv, stdout, stderr)
}

// runEnv is run with the environment read through getenv.
func runEnv(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return runGlobals(ctx, &globals{stdout: newEscapingWriter(stdout), stderr: newEscapingWriter(stderr), getenv: getenv}, args)
}

// runGlobals runs one command line with g's streams, environment and hooks.
func runGlobals(ctx context.Context, g *globals, args []string) int {
	// Every byte railctl writes is redacted of the session's passwords
	// (redact.go); the URL comes from the flag or $DATABASE_URL, read after
	// parsing so no default ever prints it.
	secrets := func() []string { return secretsOf(g.databaseURL, g.env) }
	g.stdout, g.stderr = redactor{w: g.stdout, secrets: secrets}, redactor{w: g.stderr, secrets: secrets}
	stdout, stderr := g.stdout, g.stderr
	fs := flag.NewFlagSet("railctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&g.databaseURL, "database-url", "", "PostgreSQL connection string (default $DATABASE_URL; never printed)")
	fs.Usage = func() { usage(stderr, fs) }
	parseErr := fs.Parse(args)
	if g.databaseURL == "" {
		g.databaseURL = g.env("DATABASE_URL")
	}
	if parseErr != nil {
		if errors.Is(parseErr, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" {
		usage(stdout, fs)
		if len(rest) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == rest[0] {
			err := c.run(ctx, g, rest[1:])
			if err == nil {
				return exitOK
			}
			var ce *codeError
			if errors.As(err, &ce) {
				if ce.code != exitFenced && ce.code != exitNothing {
					fmt.Fprintf(stderr, "railctl %s: %v\n", c.name, err)
				}
				return ce.code
			}
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			fmt.Fprintf(stderr, "railctl %s: %v\n", c.name, err)
			return exitError
		}
	}
	fmt.Fprintf(stderr, "railctl: unknown command %q (run `railctl help`)\n", rest[0])
	return exitUsage
}

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: railctl [--database-url URL] <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `railctl <command> -h` for a command's flags.")
	fmt.Fprintln(w, "\nglobal flags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// newFlags returns a flag set for a subcommand that reports parse errors
// as usage errors.
func newFlags(g *globals, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("railctl "+name, flag.ContinueOnError)
	fs.SetOutput(g.stderr)
	fs.Usage = func() {
		fmt.Fprintf(g.stderr, "usage: railctl %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}
