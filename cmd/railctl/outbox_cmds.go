package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
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
	c := g.flags("emit", "--firm F [--matter M] --name N [--payload k=v]...", 0)
	firm := c.String("firm", "", "firm id (uuid, required)")
	matter := c.String("matter", "", "matter id (uuid)")
	name := c.String("name", "", "event name: a lowercase past-tense noun.verb fact, e.g. document.uploaded (required)")
	payload := kvFlag{}
	c.Var(payload, "payload", "payload id as key=value (repeatable)")
	f := rail.Fact{Payload: payload}
	s, err := c.open(ctx, args, func() (err error) {
		if *firm == "" || *name == "" {
			return usageError("--firm and --name are required")
		}
		f.Name = *name
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
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := postgres.RecordFact(ctx, s.pool, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s recorded (event %s)\n", f.Name, id)
	return nil
}

// cmdRelay invokes the relay function's own handler once, as its schedule
// does (app.ForOperator): it drains the outbox onto the bus
// (RAIL_EVENT_BUS, RAIL_EVENT_SOURCE; AWS_ENDPOINT_URL honoured) for its
// window, parking what can never be sent, and prints the handler's result.
func cmdRelay(ctx context.Context, g *globals, args []string) error {
	c := g.flags("relay", "[--once] [--window D] [--poll D] [--json] [--metrics]", withConfig)
	once := c.Bool("once", false, "one drain pass, then exit")
	window := c.Duration("window", 0, fmt.Sprintf("keep draining this long (default $%s, else %s)", lambdafn.EnvRelayWindow, rail.DefaultRelayWindow))
	poll := c.Duration("poll", 0, "pause between empty passes (0: the relay's default)")
	asJSON := c.Bool("json", false, "print the relay's result as JSON (what the function returns)")
	metrics := c.Bool("metrics", false, "write the relay's metrics (CloudWatch EMF lines) to stderr")
	s, err := c.open(ctx, args, func() error {
		if *window < 0 || *poll < 0 {
			return usageError("--window and --poll: want durations of 0 or more")
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	switch {
	case *once:
		s.cfg.RelayWindow = time.Nanosecond // the relay makes at least one pass, and this one only
	case *window > 0:
		s.cfg.RelayWindow = *window
	}
	rl, err := s.operatorRail(ctx, *metrics)
	if err != nil {
		return err
	}
	rl.Relay.Poll = *poll
	if !*once {
		fmt.Fprintf(g.stderr, "relaying outbox -> bus %q for %s\n", s.cfg.EventBus, s.cfg.RelayWindow)
	}
	start := time.Now()
	res, err := rl.InvokeRelay(ctx)
	if *asJSON {
		if jerr := json.NewEncoder(g.stdout).Encode(res); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprintf(g.stdout, "published %d, failed %d, parked %d in %s; backlog %d (oldest %.1fs), parked in all %d\n",
		res.Published, res.Failed, res.Parked, time.Since(start).Round(time.Millisecond), res.Backlog, res.OldestAgeSeconds, res.ParkedTotal)
	if res.LeaseBusy > 0 {
		fmt.Fprintf(g.stdout, "another relay held the relay lease for %d pass(es): see railctl outbox lease\n", res.LeaseBusy)
	}
	return err
}

// cmdOutbox: `outbox parked` lists parked facts (the OutboxParked alarm's
// runbook); `outbox unpark --event E...` makes them due again once the
// cause is fixed; `outbox lease` shows who holds the relay lease.
func cmdOutbox(ctx context.Context, g *globals, args []string) error {
	if len(args) == 0 || (args[0] != "parked" && args[0] != "unpark" && args[0] != "lease") {
		return usageError("outbox: want a subcommand: parked, unpark or lease")
	}
	sub := args[0]
	switch sub {
	case "lease":
		c := g.flags("outbox lease", "[--json]", 0)
		asJSON := c.Bool("json", false, "print JSON")
		s, err := c.open(ctx, args[1:], nil)
		if err != nil {
			return err
		}
		defer s.Close()
		l, err := postgres.ReadRelayLease(ctx, s.pool)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(g.stdout).Encode(l)
		}
		switch {
		case l.Running:
			fmt.Fprintf(g.stdout, "held by relay run %s (token %d) since %s, until %s; %d takeover(s) so far\n",
				l.Holder.UUID, l.Token, l.TakenAt.Time.UTC().Format(time.RFC3339), l.LeaseUntil.Time.UTC().Format(time.RFC3339Nano), l.Takeovers)
		case l.Holder.Valid:
			fmt.Fprintf(g.stdout, "ended: relay run %s (token %d) did not release it; the next relay takes it over; %d takeover(s) so far\n",
				l.Holder.UUID, l.Token, l.Takeovers)
		default:
			fmt.Fprintf(g.stdout, "released (token %d); %d takeover(s) so far\n", l.Token, l.Takeovers)
		}
		return nil
	case "parked":
		c := g.flags("outbox parked", "[--limit N] [--json]", 0)
		limit := c.Int("limit", 100, "list at most this many, oldest parked first")
		asJSON := c.Bool("json", false, "print JSON")
		s, err := c.open(ctx, args[1:], nil)
		if err != nil {
			return err
		}
		defer s.Close()
		parked, err := postgres.ParkedFacts(ctx, s.pool, *limit)
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
		c := g.flags("outbox unpark", "--event E [--event E]...", 0)
		var ids kvList
		c.Var(&ids, "event", "event id of a parked fact (repeatable)")
		var events []uuid.UUID
		s, err := c.open(ctx, args[1:], func() error {
			if len(ids) == 0 {
				return usageError("outbox unpark: --event is required")
			}
			for _, e := range ids {
				id, err := uuid.Parse(e)
				if err != nil {
					return usageError("event id %q is not a uuid", e)
				}
				events = append(events, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer s.Close()
		n, err := postgres.UnparkFacts(ctx, s.pool, events)
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
