package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/jackc/pgx/v5/pgxpool"

	railsql "github.com/pramaan/brief-rail/sql"
)

// The SchemaMigration custom resource, as a state machine with a deadline.
//
// Every request gets exactly one reply, PUT to the request's ResponseURL
// before the invocation's deadline:
//
//	Delete                         SUCCESS at once; the schema is left as it is (no database call)
//	Update, rollback               SUCCESS at once (no database call, no lock): CloudFormation is
//	                               putting back an older CodeVersion (ResourceProperties) than the
//	                               one it is leaving (OldResourceProperties); the schema stays
//	                               where the newer code left it, which the older code accepts
//	Create / Update, schema ahead  SUCCESS after reading the version (no lock): the database has
//	                               more migrations than this code ships, so this is older code
//	Create / Update                migrate: wait for the migration lock at most LockWait, then
//	                               apply the pending migrations; SUCCESS with Data.Version, or
//	                               FAILED with the migration's error (lock held, database
//	                               unreachable, a migration that failed or ran out of budget)
//
// The budget: the database work runs on a context that ends replyReserve
// before the invocation's deadline (a fifth of the time left, between 2 s
// and 20 s), so a migration that blocks or a database that does not answer
// still leaves time for the reply. The reply is sent by a client of its own
// with per-attempt timeouts, retried while the deadline allows; a reply URL
// that hangs or refuses fails the invocation before the deadline (the
// function is never killed mid-reply, and the log says why). The function's
// event-invoke config makes Lambda never retry it, and the custom
// resource's ServiceTimeout bounds CloudFormation's wait for a reply that
// never came.

// Reply limits: CloudFormation accepts a response body of at most 4,096
// bytes; the Reason is cut (after JSON escaping) to at most maxReason.
const (
	maxResponseBody = 4096
	maxReason       = 3000
)

// ternLockID is the session advisory lock tern's migrator takes
// (github.com/jackc/tern/v2/migrate, lockNum).
const ternLockID = int64(9628173550095224)

// cfnResponseHost is the host of CloudFormation's custom resource response
// URLs: the bucket cloudformation-custom-resource-response-<region without
// dashes> on S3's virtual-hosted endpoints (s3, s3-<region>, s3.<region>,
// and .amazonaws.com.cn in China).
var cfnResponseHost = regexp.MustCompile(`^cloudformation-custom-resource-response-[a-z0-9]+\.s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com(?:\.cn)?$`)

// ErrResponseURLRefused: the request's ResponseURL is not one of
// CloudFormation's S3 response endpoints (nor a prefix in
// RAIL_RESPONSE_URL_PREFIXES); the function sends nothing there.
var ErrResponseURLRefused = errors.New("response URL is not a CloudFormation response endpoint")

// CheckResponseURL accepts CloudFormation's S3 response endpoints over
// https (and URLs starting with one of prefixes).
func CheckResponseURL(raw string, prefixes []string) error {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(raw, p) {
			return nil
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrResponseURLRefused, err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%w: scheme %q (want https)", ErrResponseURLRefused, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: it carries user information", ErrResponseURLRefused)
	case u.Port() != "" && u.Port() != "443":
		return fmt.Errorf("%w: port %s", ErrResponseURLRefused, u.Port())
	case !cfnResponseHost.MatchString(strings.ToLower(u.Hostname())):
		return fmt.Errorf("%w: host %q", ErrResponseURLRefused, u.Hostname())
	}
	return nil
}

// CustomResourceOutcome is what the function replied, returned as the
// invocation's result.
type CustomResourceOutcome struct {
	Replied string `json:"replied"` // SUCCESS or FAILED
	Path    string `json:"path"`    // delete, rollback, schema_ahead, migrated, failed
	Reason  string `json:"reason,omitempty"`
}

// ServeCustomResource decides the request's outcome within the budget and
// replies to CloudFormation before ctx's deadline.
func (h *MigrateHandler) ServeCustomResource(ctx context.Context, ev cfn.Event) (any, error) {
	log := h.Log.With("request_type", ev.RequestType, "logical_resource_id", ev.LogicalResourceID,
		"request_id", ev.RequestID)
	if err := CheckResponseURL(ev.ResponseURL, h.ResponseURLPrefixes); err != nil {
		// Nothing is sent: whoever invoked the function is not CloudFormation.
		log.ErrorContext(ctx, "custom resource request refused", "err", err.Error())
		return nil, fmt.Errorf("lambdafn: %w", err)
	}
	deadline, ok := ctx.Deadline()
	if !ok { // by hand, outside Lambda
		deadline = time.Now().Add(5 * time.Minute)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	workCtx, cancel := context.WithDeadline(ctx, deadline.Add(-replyReserve(time.Until(deadline))))
	started := time.Now()
	out, data := h.decide(workCtx, ev, log)
	cancel()
	log.InfoContext(ctx, "custom resource decided", "path", out.Path, "status", out.Replied,
		"reason", out.Reason, "took_ms", time.Since(started).Milliseconds(),
		"left_ms", time.Until(deadline).Milliseconds())

	resp := cfn.Response{
		Status: cfn.StatusType(out.Replied), RequestID: ev.RequestID, LogicalResourceID: ev.LogicalResourceID,
		StackID: ev.StackID, PhysicalResourceID: SchemaResourceID, Reason: out.Reason, Data: data,
	}
	body, err := EncodeResponse(resp)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: encode the reply: %w", err)
	}
	// The reply ends a little before the deadline, so the invocation
	// itself returns (and logs) instead of being cut off.
	rctx, rcancel := context.WithDeadline(ctx, deadline.Add(-250*time.Millisecond))
	defer rcancel()
	r := h.Replier
	if r == nil {
		r = defaultReplier
	}
	if err := r.Send(rctx, ev.ResponseURL, body); err != nil {
		log.ErrorContext(ctx, "reply to CloudFormation not delivered", "status", out.Replied, "err", err.Error())
		return nil, fmt.Errorf("lambdafn: reply %s to CloudFormation not delivered: %w", out.Replied, err)
	}
	return out, nil
}

// replyReserve is the part of the time left kept for the reply.
func replyReserve(left time.Duration) time.Duration {
	return min(max(left/5, 2*time.Second), 20*time.Second)
}

func (h *MigrateHandler) decide(ctx context.Context, ev cfn.Event, log *slog.Logger) (CustomResourceOutcome, map[string]any) {
	success := func(path, reason string) CustomResourceOutcome {
		return CustomResourceOutcome{Replied: string(cfn.StatusSuccess), Path: path, Reason: reason}
	}
	switch ev.RequestType {
	case cfn.RequestDelete:
		return success("delete", "the schema is left as it is"), nil
	case cfn.RequestCreate, cfn.RequestUpdate:
	default:
		return CustomResourceOutcome{Replied: string(cfn.StatusFailed), Path: "failed",
			Reason: fmt.Sprintf("unknown custom resource request type %q", ev.RequestType)}, nil
	}
	if ev.RequestType == cfn.RequestUpdate {
		to, okTo := codeVersion(ev.ResourceProperties)
		from, okFrom := codeVersion(ev.OldResourceProperties)
		if okTo && okFrom && to < from {
			return success("rollback", fmt.Sprintf(
				"rollback from code version %d to %d: the schema stays where it is (migrations are additive)", from, to)), nil
		}
	}
	shipped, err := latestShipped()
	if err != nil {
		return failed(err), nil
	}
	// Reading the version takes no lock: an older build answers at once.
	if v, err := h.peekVersion(ctx); err != nil {
		return failed(err), nil
	} else if int(v) > shipped {
		return success("schema_ahead", fmt.Sprintf(
			"the schema is at version %d, ahead of this code's %d: left as it is", v, shipped)), map[string]any{"Version": v}
	}
	res, err := h.Migrate(ctx)
	if err != nil {
		log.ErrorContext(ctx, "migration failed", "err", err.Error())
		return failed(err), nil
	}
	return success("migrated", ""), map[string]any{"Version": res.To}
}

func failed(err error) CustomResourceOutcome {
	return CustomResourceOutcome{Replied: string(cfn.StatusFailed), Path: "failed", Reason: err.Error()}
}

// latestShipped is the number of migrations this build ships.
var latestShipped = railsql.Latest

func (h *MigrateHandler) peekVersion(ctx context.Context) (int32, error) {
	conn, err := h.Pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Release()
	return SchemaVersion(ctx, conn)
}

// tryMigrationLock takes tern's advisory lock, waiting at most wait (and
// ctx).
func tryMigrationLock(ctx context.Context, conn *pgxpool.Conn, wait time.Duration) error {
	started := time.Now()
	until := started.Add(wait)
	if d, ok := ctx.Deadline(); ok && d.Before(until) {
		until = d
	}
	const poll = 200 * time.Millisecond
	for {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, ternLockID).Scan(&got); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if got {
			return nil
		}
		if time.Until(until) < poll {
			return fmt.Errorf("%w%s; waited %s, giving up before the deadline (deploy again once it has finished)",
				ErrMigrationLockHeld, lockHolder(ctx, conn), time.Since(started).Round(100*time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrMigrationLockHeld, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// lockHolder names the session holding the migration lock, best effort.
func lockHolder(ctx context.Context, conn *pgxpool.Conn) string {
	var pid int32
	var app, state string
	err := conn.QueryRow(ctx, `SELECT a.pid, coalesce(a.application_name, ''), coalesce(a.state, '')
        FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid
        LIMIT 1`, ternLockID).Scan(&pid, &app, &state)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (backend pid %d, application %q, %s)", pid, app, state)
}

// releaseMigrationLock drops the lock and hands conn back; when the unlock
// cannot run (a cancelled statement closed the connection), the session is
// closed, which frees the lock too.
func releaseMigrationLock(ctx context.Context, conn *pgxpool.Conn, log *slog.Logger) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if _, err := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, ternLockID); err != nil {
		log.WarnContext(ctx, "migration lock: unlock failed; closing the session instead", "err", err.Error())
		_ = conn.Hijack().Close(uctx)
		return
	}
	conn.Release()
}

// EncodeResponse is the reply's JSON body: the Reason cut so that it is at
// most maxReason bytes once escaped and the whole body at most 4,096 bytes.
func EncodeResponse(r cfn.Response) ([]byte, error) {
	reason := r.Reason
	r.Reason = ""
	base, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		return base, nil
	}
	// ,"Reason":"..." adds 12 bytes around the escaped text.
	limit := min(maxReason, maxResponseBody-len(base)-12)
	r.Reason = cutEscaped(reason, limit)
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(body) > maxResponseBody { // cannot happen with the arithmetic above; never send it
		r.Reason = ""
		return json.Marshal(r)
	}
	return body, nil
}

// escapedLen is the length of s as encoding/json writes it, quotes excluded.
func escapedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}

// cutEscaped returns s, or its longest prefix (on a rune boundary) followed
// by "…" whose JSON-escaped form is at most limit bytes.
func cutEscaped(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if escapedLen(s) <= limit {
		return s
	}
	const more = "…"
	limit -= escapedLen(more)
	if limit <= 0 {
		return ""
	}
	bounds := make([]int, 0, len(s)) // rune start offsets
	for i := range s {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(s))
	lo, hi := 0, len(bounds)-1 // the longest bounds[k] with escapedLen(s[:bounds[k]]) <= limit
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if escapedLen(s[:bounds[mid]]) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return s[:bounds[lo]] + more
}

// Replier PUTs a custom resource reply with its own bounded client, never
// http.DefaultClient: each attempt is bounded by AttemptTimeout and by ctx,
// and a refused or failed attempt is retried while ctx allows.
type Replier struct {
	Client         *http.Client
	AttemptTimeout time.Duration
}

// NewReplier is a Replier whose client dials, shakes hands and waits for
// headers within attemptTimeout and never follows redirects.
func NewReplier(attemptTimeout time.Duration) *Replier {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: attemptTimeout}).DialContext,
		TLSHandshakeTimeout:   attemptTimeout,
		ResponseHeaderTimeout: attemptTimeout,
		MaxIdleConns:          2,
		IdleConnTimeout:       30 * time.Second,
	}
	return &Replier{AttemptTimeout: attemptTimeout, Client: &http.Client{
		Transport: tr, Timeout: attemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var defaultReplier = NewReplier(5 * time.Second)

// Send PUTs body to url until S3 answers 200, an answer says retrying is
// useless (a 4xx: the presigned URL expired or was altered), or ctx ends.
func (r *Replier) Send(ctx context.Context, url string, body []byte) error {
	var last error
	for attempt := 1; ; attempt++ {
		retry, err := r.attempt(ctx, url, body)
		if err == nil {
			return nil
		}
		last = fmt.Errorf("attempt %d: %w", attempt, err)
		if !retry {
			return last
		}
		wait := min(time.Duration(attempt)*250*time.Millisecond, 2*time.Second)
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait+100*time.Millisecond {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(wait):
		}
	}
}

func (r *Replier) attempt(ctx context.Context, url string, body []byte) (retry bool, err error) {
	actx, cancel := context.WithTimeout(ctx, r.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	// The presigned URL is signed without a content type: send none.
	req.Header.Del("Content-Type")
	resp, err := r.Client.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode == http.StatusOK:
		return false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	default:
		return false, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
}
