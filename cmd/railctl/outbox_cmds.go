package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// kvFlag collects repeated --payload k=v flags.
type kvFlag map[string]string

func (m kvFlag) String() string { return fmt.Sprint(map[string]string(m)) }

func (m kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	m[k] = v
	return nil
}

func cmdEmit(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "emit", "--firm F [--matter M] --name N [--payload k=v]...")
	firm := fs.String("firm", "", "firm id (uuid, required)")
	matter := fs.String("matter", "", "matter id (uuid)")
	name := fs.String("name", "", "event name: a lowercase past-tense noun.verb fact, e.g. document.uploaded (required)")
	payload := kvFlag{}
	fs.Var(payload, "payload", "payload id as key=value (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *firm == "" || *name == "" {
		return usageError("--firm and --name are required")
	}
	f := rail.Fact{Name: *name, Payload: payload}
	var err error
	if f.FirmID, err = uuid.Parse(*firm); err != nil {
		return usageError("firm id %q is not a uuid", *firm)
	}
	if *matter != "" {
		m, err := uuid.Parse(*matter)
		if err != nil {
			return usageError("matter id %q is not a uuid", *matter)
		}
		f.MatterID = uuid.NullUUID{UUID: m, Valid: true}
	}
	if err := f.Validate(); err != nil {
		return usageError("%v", err)
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	id, err := postgres.RecordFact(ctx, pool, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s recorded (event %s)\n", f.Name, id)
	return nil
}

func cmdRelay(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "relay", "[--once] [--window D] [--poll D]")
	once := fs.Bool("once", false, "one drain pass, then exit")
	window := fs.Duration("window", rail.DefaultRelayWindow, "keep draining this long")
	poll := fs.Duration("poll", 0, "pause between empty passes (0: the relay's default)")
	asJSON := fs.Bool("json", false, "print the stats as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	bus := os.Getenv("RAIL_EVENT_BUS")
	if bus == "" {
		bus = "default"
	}
	source := os.Getenv("RAIL_EVENT_SOURCE")
	if source == "" {
		source = rail.DefaultEventSource
	}
	acfg, err := awsconfig.LoadDefaultConfig(ctx) // honours AWS_ENDPOINT_URL (moto_server, LocalStack)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	r := &rail.Relay{Outbox: postgres.NewOutbox(pool), Publisher: eventbridge.New(acfg, bus, source)}
	start := time.Now()
	var st rail.RelayStats
	if *once {
		st, err = r.DrainOnce(ctx)
	} else {
		fmt.Fprintf(g.stderr, "relaying outbox -> bus %q for %s\n", bus, *window)
		st, err = r.Run(ctx, *window, *poll)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(g.stdout).Encode(st)
	}
	fmt.Fprintf(g.stdout, "published %d, failed %d, parked %d in %s; backlog %d (oldest %.1fs), parked in all %d\n",
		st.Published, st.Failed, st.Parked, time.Since(start).Round(time.Millisecond), st.Backlog, st.OldestAgeSeconds, st.ParkedTotal)
	return nil
}

// cmdOutbox: `outbox parked` lists parked facts (the OutboxParked alarm's
// runbook); `outbox unpark --event E...` makes them due again once the
// cause is fixed.
func cmdOutbox(ctx context.Context, g *globals, args []string) error {
	if len(args) == 0 || (args[0] != "parked" && args[0] != "unpark") {
		return usageError("outbox: want a subcommand: parked or unpark")
	}
	sub := args[0]
	switch sub {
	case "parked":
		fs := newFlags(g, "outbox parked", "[--limit N] [--json]")
		limit := fs.Int("limit", 100, "list at most this many, oldest parked first")
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		pool, err := g.pool(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()
		parked, err := postgres.ParkedFacts(ctx, pool, *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			if parked == nil {
				parked = []postgres.ParkedFact{}
			}
			return json.NewEncoder(g.stdout).Encode(parked)
		}
		if len(parked) == 0 {
			fmt.Fprintln(g.stdout, "no parked facts")
			return nil
		}
		for _, p := range parked {
			matter := "-"
			if p.MatterID.Valid {
				matter = p.MatterID.UUID.String()
			}
			fmt.Fprintf(g.stdout, "%s  %s  firm %s matter %s  occurred %s  parked %s after %d attempt(s)\n    reason: %s\n    payload: %s\n",
				p.EventID, p.Name, p.FirmID, matter, p.OccurredAt, p.ParkedAt.UTC().Format(time.RFC3339), p.Attempts,
				p.Reason, truncateText(p.Payload, 200))
		}
		fmt.Fprintf(g.stdout, "%d parked fact(s) listed; release with: railctl outbox unpark --event ID...\n", len(parked))
		return nil
	default:
		fs := newFlags(g, "outbox unpark", "--event E [--event E]...")
		var ids kvList
		fs.Var(&ids, "event", "event id of a parked fact (repeatable)")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if len(ids) == 0 {
			return usageError("outbox unpark: --event is required")
		}
		var events []uuid.UUID
		for _, s := range ids {
			id, err := uuid.Parse(s)
			if err != nil {
				return usageError("event id %q is not a uuid", s)
			}
			events = append(events, id)
		}
		pool, err := g.pool(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()
		n, err := postgres.UnparkFacts(ctx, pool, events)
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "%d fact(s) released; the relay takes them at its next pass\n", n)
		return nil
	}
}

// kvList collects a repeated flag.
type kvList []string

func (l *kvList) String() string     { return strings.Join(*l, ",") }
func (l *kvList) Set(s string) error { *l = append(*l, s); return nil }

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
