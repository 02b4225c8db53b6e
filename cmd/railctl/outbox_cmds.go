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

	"github.com/pramaan/brief-rail/pkg/eventbridge"
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
	id, err := rail.RecordFact(ctx, pool, f)
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
	r := &rail.Relay{Pool: pool, Publisher: eventbridge.New(acfg, bus, source)}
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
