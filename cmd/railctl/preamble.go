package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The start every database command shares: its flags, then, once they are
// parsed and in this order, the matter (--firm, --matter), the command's own
// checks, the configuration and the pool. A bad flag, id or value is a
// usage error (exit 2) before anything is opened.

// needs say what a command's start reads.
type needs uint8

const (
	withMatter needs = 1 << iota // --firm and --matter, both required
	// withConfig: the deployed functions' configuration, read as they read
	// it (lambdafn.LoadOperatorConfig).
	withConfig
	// withLedger: withConfig with --lease and --max-attempts over it; the
	// values used are printed on stderr (the config: line).
	withLedger
	// withOnCall: withLedger with on-call's --settle, --builder, --model
	// and --rate, and the on-call settings resolved.
	withOnCall
	withArgs // positional arguments are the command's (else a usage error)
)

// cmdFlags is a command's flag set with the shared flags its needs add.
type cmdFlags struct {
	*flag.FlagSet
	g      *globals
	needs  needs
	matter matterFlags
	op     *opConfig
	onCall *onCallFlags
}

// flags starts a command's flag set; the command adds its own flags, then
// calls open.
func (g *globals) flags(name, synopsis string, n needs) *cmdFlags {
	c := &cmdFlags{FlagSet: newFlags(g, name, synopsis), g: g, needs: n}
	if n&withMatter != 0 {
		c.matter = addMatterFlags(c.FlagSet)
	}
	if n&(withLedger|withOnCall) != 0 {
		c.op = addOpConfig(c.FlagSet)
	}
	if n&withOnCall != 0 {
		c.onCall = addOnCallFlags(c.FlagSet)
	}
	return c
}

// session is a started command: its matter, its configuration and an open
// pool. Close it.
type session struct {
	g    *globals
	ref  rail.MatterRef // withMatter
	pool *pgxpool.Pool
	// cfg is the deployed configuration with the flags over it (withConfig
	// and up); zero otherwise: the ledger's defaults.
	cfg    app.Config
	onCall postgres.OnCallConfig // withOnCall
}

// open parses args and starts the command. check, if not nil, runs after
// the matter is read and before the configuration and the pool: the
// command's own flag checks.
func (c *cmdFlags) open(ctx context.Context, args []string, check func() error) (*session, error) {
	if err := c.parse(args); err != nil {
		return nil, err
	}
	s := &session{g: c.g}
	var err error
	if c.needs&withMatter != 0 {
		if s.ref, err = c.matter.ref(); err != nil {
			return nil, err
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	if c.needs&(withConfig|withLedger|withOnCall) != 0 {
		if s.cfg, err = lambdafn.LoadOperatorConfig(c.g.env); err != nil {
			return nil, usageError("%v", err)
		}
		if c.op != nil {
			if err := c.op.apply(c.g, &s.cfg, c.onCall); err != nil {
				return nil, err
			}
		}
		if c.onCall != nil {
			if s.onCall, err = s.onCallConfig(); err != nil {
				return nil, err
			}
		}
	}
	if s.pool, err = c.g.pool(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// parse parses args: a bad flag, or an argument where the command takes
// none, is a usage error; -h is flag.ErrHelp (exit 0).
func (c *cmdFlags) parse(args []string) error {
	if err := c.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError("%v", err)
	}
	if c.needs&withArgs == 0 && c.NArg() > 0 {
		return usageError("unexpected arguments: %s", strings.Join(c.Args(), " "))
	}
	return nil
}

// Close closes the pool.
func (s *session) Close() { s.pool.Close() }

// ledger is the ledger with the session's configuration.
func (s *session) ledger() *postgres.Ledger { return postgres.NewLedger(s.pool, s.cfg.RailConfig()) }

// onCallConfig is what a diagnosis is judged with: the settle delay and
// the deployed builder of the session's configuration.
func (s *session) onCallConfig() (postgres.OnCallConfig, error) {
	id, err := s.cfg.DeployedIdentity()
	if err != nil {
		return postgres.OnCallConfig{}, usageError("%v", err)
	}
	return postgres.OnCallConfig{SettleDelay: s.cfg.SettleDelay, Deployed: id}, nil
}

// operatorRail assembles the functions' handlers for an operator's pass
// (app.ForOperator) with the session's configuration: their log lines go
// to stderr and, with metrics, their CloudWatch metrics (EMF lines) too.
func (s *session) operatorRail(ctx context.Context, metrics bool) (*app.Rail, error) {
	w := io.Discard
	if metrics {
		w = s.g.stderr
	}
	return app.ForOperator(ctx, s.cfg, s.pool, slog.New(slog.NewTextHandler(s.g.stderr, nil)), emf.New(w))
}

// pool opens railctl's pool the way the functions open theirs (app.OpenPool):
// --database-url (default $DATABASE_URL), or DB_HOST, DB_USER and
// DB_IAM_AUTH=true for RDS Proxy with IAM tokens. It checks the connection.
func (g *globals) pool(ctx context.Context) (*pgxpool.Pool, error) {
	if g.databaseURL == "" && g.env(pgconn.EnvHost) == "" {
		return nil, usageError("no database: pass --database-url, set DATABASE_URL, or DB_HOST/DB_NAME/DB_USER (DB_IAM_AUTH=true for RDS Proxy)")
	}
	pool, err := app.OpenPool(ctx, railctlEnv(g.env, g.databaseURL, 4))
	if err != nil {
		return nil, usageError("%v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

// matterFlags registers --firm and --matter.
type matterFlags struct{ firm, matter *string }

func addMatterFlags(fs *flag.FlagSet) matterFlags {
	return matterFlags{
		firm:   fs.String("firm", "", "firm id (uuid, required)"),
		matter: fs.String("matter", "", "matter id (uuid, required)"),
	}
}

func (m matterFlags) ref() (rail.MatterRef, error) {
	if *m.firm == "" || *m.matter == "" {
		return rail.MatterRef{}, usageError("--firm and --matter are required")
	}
	ref, err := rail.ParseMatterRef(*m.firm, *m.matter)
	if err != nil {
		return rail.MatterRef{}, usageError("%v", err)
	}
	return ref, nil
}

// matterErr gives an unknown matter, or another firm's, exit code 5.
func matterErr(err error) error {
	switch {
	case errors.Is(err, rail.ErrUnknownMatter):
		return withCode(exitNotFound, "%v: no such matter (check the matter id)", err)
	case errors.Is(err, rail.ErrFirmMismatch):
		return withCode(exitNotFound, "%v: the matter id exists under another firm (check --firm)", err)
	}
	return err
}
