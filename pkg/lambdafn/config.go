// Package lambdafn holds what the four Lambda functions (relay, trigger,
// builder, sweeper) share: configuration from the environment, the clients
// they build once per cold start, and their handlers. The mains in
// functions/ only wire these together, so every handler is tested in Go
// directly, the way Lambda calls it.
package lambdafn

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Function names.
const (
	Relay   = "relay"
	Trigger = "trigger"
	Builder = "builder"
	Sweeper = "sweeper"
	Migrate = "migrate" // applies the schema migrations (migrate.go)
)

// Environment variables (docs/ARCHITECTURE.md, "Runtime configuration").
const (
	EnvEventBus        = "RAIL_EVENT_BUS"
	EnvEventSource     = "RAIL_EVENT_SOURCE"
	EnvBuildQueueURL   = "RAIL_BUILD_QUEUE_URL"
	EnvLease           = "RAIL_LEASE"
	EnvSettleDelay     = "RAIL_SETTLE_DELAY"
	EnvMaxAttempts     = "RAIL_MAX_ATTEMPTS"
	EnvRelayWindow     = "RAIL_RELAY_WINDOW"
	EnvOutboxRetention = "RAIL_OUTBOX_RETENTION"
	EnvInboxRetention  = "RAIL_INBOX_RETENTION"
	EnvBriefBuilder    = "RAIL_BRIEF_BUILDER"
	EnvBedrockModelID  = "RAIL_BEDROCK_MODEL_ID"
	EnvBedrockMaxTok   = "RAIL_BEDROCK_MAX_TOKENS"
	EnvCommitTimeout   = "RAIL_COMMIT_TIMEOUT"
	EnvFrameKeep       = "RAIL_FRAME_KEEP"
	EnvFrameRetention  = "RAIL_FRAME_RETENTION"
	EnvBackfillQueue   = "RAIL_BACKFILL_QUEUE_URL"
	EnvBackfillRate    = "RAIL_BACKFILL_RATE"
	// EnvBackfillConcurrency: the backfill builders' concurrency (the
	// backfill queue's MaximumConcurrency): the headroom of the sweeper's
	// admission bound over what those builders served (rail.BackfillRoom).
	EnvBackfillConcurrency = "RAIL_BACKFILL_CONCURRENCY"
)

// DefaultBackfillRate is the backfill's rate when RAIL_BACKFILL_RATE is
// unset: builds admitted per minute.
const DefaultBackfillRate = 30

// Config is one function's configuration. The database settings are read
// by pkg/pgconn.
type Config struct {
	Function        string
	EventBus        string        // relay
	EventSource     string        // relay (the envelopes' source), trigger (the only source it takes)
	BuildQueueURL   string        // trigger, builder, sweeper
	Lease           time.Duration // builder, sweeper
	SettleDelay     time.Duration // trigger, builder (follow-ups)
	MaxAttempts     int           // builder, sweeper
	RelayWindow     time.Duration // relay
	OutboxRetention time.Duration // sweeper
	InboxRetention  time.Duration // sweeper
	BriefBuilder    string        // builder: extractive or bedrock
	BedrockModelID  string        // builder with bedrock
	// BedrockMaxTokens is the Bedrock request's output-token limit; 0 is
	// the model's own (bedrock.DefaultMaxTokens).
	BedrockMaxTokens int
	CommitTimeout    time.Duration // builder: bound on each outcome statement (commit, Fail)
	FrameKeep        int           // sweeper: newest frames kept per matter
	FrameRetention   time.Duration // sweeper: frames younger than this are kept

	// Sources says where each setting read from the environment came
	// from, keyed by its variable (EnvLease, ...): the variable's own name
	// when it was set, SourceDefault when the default applied.
	Sources map[string]string

	// BackfillQueueURL: the backfill's own build queue (sweeper); empty:
	// the sweeper admits no backfill.
	BackfillQueueURL string
	BackfillRate     float64 // sweeper: backfill builds admitted per minute (> 0)
	// BackfillConcurrency: the backfill builders' concurrency; the sweeper
	// keeps the backfill admitted and unserved within what those builders
	// served in the last minute plus it (rail.BackfillRoom).
	BackfillConcurrency int

	// Read from no variable (zero: the defaults); the local rail sets them
	// to its scaled-down timings.
	SweepGrace   time.Duration
	BackoffBase  time.Duration
	BackoffMax   time.Duration
	BuildReserve time.Duration // zero: DefaultReserve(CommitTimeout)
}

// FramePolicy is the frame retention the sweeper prunes with.
func (c Config) FramePolicy() postgres.FrameRetention {
	return postgres.FrameRetention{Keep: c.FrameKeep, Retention: c.FrameRetention}
}

// SourceDefault marks a setting that took its documented default.
const SourceDefault = "default"

// DeployedIdentity is the identity of the builder this configuration
// deploys (RAIL_BRIEF_BUILDER, RAIL_BEDROCK_MODEL_ID), without building it:
// the sweeper and railctl compare frames against it. It is the identity
// the builder pkg/app's registry makes records on its frames
// (app's TestDeployedIdentityIsTheBuildersOwn).
func (c Config) DeployedIdentity() (rail.BuilderIdentity, error) {
	switch c.BriefBuilder {
	case "", "extractive":
		return brief.NewExtractive().Identity(), nil
	case "bedrock":
		if c.BedrockModelID == "" {
			return rail.BuilderIdentity{}, errors.New("the bedrock builder needs a model id")
		}
		return bedrock.Identity(c.BedrockModelID), nil
	case "digest":
		return rail.IdentityOf(rail.DigestBuilder{}), nil
	}
	return rail.BuilderIdentity{}, fmt.Errorf("unknown builder %q (want extractive, bedrock or digest)", c.BriefBuilder)
}

// ParseBackfillRate reads a backfill rate (builds per minute): a positive
// number, at most 10,000.
func ParseBackfillRate(v string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("%q is not a number of builds per minute", v)
	}
	if r <= 0 || r > 10000 {
		return 0, fmt.Errorf("%w: %v (want more than 0 and at most 10000)", rail.ErrBadBackfillRate, r)
	}
	return r, nil
}

// RailConfig is the ledger configuration the function runs with.
func (c Config) RailConfig() rail.Config {
	return rail.Config{Lease: c.Lease, MaxAttempts: c.MaxAttempts, SweepGrace: c.SweepGrace, SettleDelay: c.SettleDelay,
		BackoffBase: c.BackoffBase, BackoffMax: c.BackoffMax}
}

// LoadConfig reads function fn's configuration with getenv (os.Getenv in
// a main), applying the documented defaults. Every missing or invalid
// variable is named in one error, so a cold start fails once, clearly.
func LoadConfig(fn string, getenv func(string) string) (Config, error) {
	switch fn {
	case Relay, Trigger, Builder, Sweeper, Migrate:
	default:
		return Config{}, fmt.Errorf("lambdafn: unknown function %q (want relay, trigger, builder, sweeper or migrate)", fn)
	}
	c, errs := load(fn, getenv)
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("lambdafn: %s configuration: %w", fn, errors.Join(errs...))
	}
	return c, nil
}

// Operator names the configuration an operator's tool (railctl) loads.
const Operator = "operator"

// LoadOperatorConfig reads the deployed functions' configuration the way
// LoadConfig does (the same variables, defaults and ranges) for an
// operator's command that acts on the same ledger (railctl sweep, build,
// status): its lease and attempt limit are then the functions'. Nothing a
// function alone needs (the build queue, the builder) is required.
func LoadOperatorConfig(getenv func(string) string) (Config, error) {
	c, errs := load(Operator, getenv)
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %w", errors.Join(errs...))
	}
	return c, nil
}

func load(fn string, getenv func(string) string) (Config, []error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var errs []error
	sources := map[string]string{}
	dur := func(key string, def time.Duration, lo, hi time.Duration) time.Duration {
		v := env(key)
		if v == "" {
			sources[key] = SourceDefault
			return def
		}
		sources[key] = key
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q is not a duration (like 10s, 15m, 168h)", key, v))
			return def
		}
		if d < lo || d > hi {
			errs = append(errs, fmt.Errorf("%s=%s is outside %s..%s", key, d, lo, hi))
		}
		return d
	}
	c := Config{
		Function:         fn,
		EventBus:         env(EnvEventBus),
		EventSource:      env(EnvEventSource),
		BuildQueueURL:    env(EnvBuildQueueURL),
		Lease:            dur(EnvLease, rail.DefaultLease, time.Minute, 24*time.Hour),
		SettleDelay:      dur(EnvSettleDelay, 10*time.Second, 0, 900*time.Second),
		RelayWindow:      dur(EnvRelayWindow, rail.DefaultRelayWindow, time.Second, 15*time.Minute),
		OutboxRetention:  dur(EnvOutboxRetention, 168*time.Hour, time.Hour, 365*24*time.Hour),
		InboxRetention:   dur(EnvInboxRetention, rail.DefaultInboxRetention, 24*time.Hour, 365*24*time.Hour),
		FrameRetention:   dur(EnvFrameRetention, postgres.DefaultFrameRetention, time.Hour, 10*365*24*time.Hour),
		MaxAttempts:      rail.DefaultMaxAttempts,
		FrameKeep:        postgres.DefaultFrameKeep,
		BriefBuilder:     env(EnvBriefBuilder),
		BedrockModelID:   env(EnvBedrockModelID),
		CommitTimeout:    dur(EnvCommitTimeout, rail.DefaultCommitTimeout, time.Second, time.Minute),
		Sources:          sources,
		BackfillQueueURL: env(EnvBackfillQueue),
		BackfillRate:     DefaultBackfillRate,

		BackfillConcurrency: rail.DefaultBackfillConcurrency,
	}
	if v := env(EnvBackfillConcurrency); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer from 1 to 1000 (the backfill queue's MaximumConcurrency)", EnvBackfillConcurrency, v))
		} else {
			c.BackfillConcurrency = n
		}
	}
	if v := env(EnvBackfillRate); v != "" {
		r, err := ParseBackfillRate(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvBackfillRate, err))
		} else {
			c.BackfillRate = r
		}
	}
	if c.EventBus == "" {
		c.EventBus = "default"
	}
	if c.EventSource == "" {
		c.EventSource = rail.DefaultEventSource
	}
	if c.BriefBuilder == "" {
		c.BriefBuilder = "extractive"
	}
	sources[EnvMaxAttempts] = SourceDefault
	if v := env(EnvMaxAttempts); v != "" {
		sources[EnvMaxAttempts] = EnvMaxAttempts
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer from 1 to 100", EnvMaxAttempts, v))
		} else {
			c.MaxAttempts = n
		}
	}
	if v := env(EnvBedrockMaxTok); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 200_000 {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer from 0 (the model's default) to 200000", EnvBedrockMaxTok, v))
		} else {
			c.BedrockMaxTokens = n
		}
	}
	if v := env(EnvFrameKeep); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer from 1 to 10000 (the current frame is always kept)", EnvFrameKeep, v))
		} else {
			c.FrameKeep = n
		}
	}
	if fn == Operator {
		return c, errs
	}
	if fn != Relay && fn != Migrate && c.BuildQueueURL == "" {
		errs = append(errs, fmt.Errorf("%s is not set: the %s sends nudges to the build queue (the stack sets it to BuildQueue's URL)", EnvBuildQueueURL, fn))
	}
	if fn == Sweeper { // the sweeper compares frames with the deployed builder's identity
		if _, err := c.DeployedIdentity(); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w (the sweeper needs the deployed builder for the backfill)", EnvBriefBuilder, c.BriefBuilder, err))
		}
	}
	if fn == Builder {
		// The build ends DefaultReserve before the lease does; leave it at
		// least half the lease.
		if r := DefaultReserve(c.CommitTimeout); 2*r > c.Lease {
			errs = append(errs, fmt.Errorf("%s=%s leaves too little of %s=%s to build: the build stops %s before the lease ends (2 x the commit timeout + 5s); keep that under half the lease",
				EnvCommitTimeout, c.CommitTimeout, EnvLease, c.Lease, r))
		}
		switch c.BriefBuilder {
		case "extractive":
		case "bedrock":
			if c.BedrockModelID == "" {
				errs = append(errs, fmt.Errorf("%s=bedrock needs %s", EnvBriefBuilder, EnvBedrockModelID))
			}
		default:
			errs = append(errs, fmt.Errorf("%s=%q: want extractive or bedrock", EnvBriefBuilder, c.BriefBuilder))
		}
	}
	return c, errs
}
