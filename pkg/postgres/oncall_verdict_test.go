package postgres_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var deployedID = rail.BuilderIdentity{Name: "test", Version: "2", ModelID: "model-b", PromptHash: strings.Repeat("c", 64)}

func oc() postgres.OnCallConfig {
	return postgres.OnCallConfig{SettleDelay: 10 * time.Second, Deployed: deployedID}
}

func (b *bundle) diagnose(t *testing.T, ref rail.MatterRef) postgres.Diagnosis {
	t.Helper()
	d, err := b.ledger.Diagnose(b.ctx, ref, oc())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func deployedFrame(s string) rail.Frame {
	f := frameOf(s)
	f.Identity = deployedID
	return f
}

// Every state a matter can be in, each produced by the real ledger
// statements (and time travel on the row where time must pass), with the
// reason and the verdict on-call reads.
func TestDiagnosisNamesEveryState(t *testing.T) {
	b := setup(t, rail.Config{MaxAttempts: 2, BackoffBase: time.Hour, BackoffMax: time.Hour})
	cases := []struct {
		state   string
		arrange func(t *testing.T, ref rail.MatterRef)
		reason  string // substring of the reason
		verdict string // substring of the verdict
	}{
		{postgres.StateNoDemand, func(*testing.T, rail.MatterRef) {}, "no demand", "no demand recorded"},
		{postgres.StateCurrent, func(t *testing.T, ref rail.MatterRef) {
			b.landWith(t, ref, deployedFrame("x"))
		}, "current at generation 1", "current at generation 1"},
		{postgres.StateOutdated, func(t *testing.T, ref rail.MatterRef) {
			b.landWith(t, ref, frameOf("old builder")) // identity {test, "", "", ""}
		}, "deployed is test@2", "current at generation 1 but outdated: built by test, deployed test@2 model=model-b"},
		{postgres.StateSettling, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
		}, "waiting for its settle delay: the nudge is due at", "behind by 1 since"},
		{postgres.StateBuilding, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			b.claimOn(t, ref, "builder:req-7")
		}, "building: token 1 by builder:req-7, lease", "because building"},
		{postgres.StateLeaseExpired, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			b.claimOn(t, ref, "builder:req-8")
			b.timeTravel(t, ref, b.ledger.Config().Lease+time.Second)
		}, "the lease of token 1 (builder:req-8) expired", "behind by 1"},
		{postgres.StateBackingOff, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			c := b.claimOn(t, ref, "w")
			if _, err := b.ledger.Fail(b.ctx, c, errors.New("bedrock throttled")); err != nil {
				t.Fatal(err)
			}
		}, "backing off until", "after attempt 1 failed: bedrock throttled"},
		{postgres.StateQuarantined, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			for i := 0; i < 2; i++ {
				c := b.claimOn(t, ref, "w")
				if _, err := b.ledger.Fail(b.ctx, c, errors.New("poison pdf")); err != nil {
					t.Fatal(err)
				}
				b.timeTravel(t, ref, 2*time.Hour) // past the backoff
			}
		}, "quarantined after 2 attempt(s): poison pdf", "railctl release"},
		{postgres.StateClosed, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			if err := postgres.SetMatterStatus(b.ctx, b.pool, ref, "closed"); err != nil {
				t.Fatal(err)
			}
		}, "closed: 1 demand(s) held until it is re-opened", "behind by 1"},
		{postgres.StateNudgeLost, func(t *testing.T, ref rail.MatterRef) {
			b.oneDemand(t, ref)
			b.timeTravel(t, ref, time.Minute) // past the settle delay, nobody claimed
		}, "no build claimed it (nudge lost or still queued): the sweeper re-nudges at", "behind by 1 since"},
	}
	for _, c := range cases {
		t.Run(c.state, func(t *testing.T) {
			ref := b.newMatter(t, "matter "+c.state)
			c.arrange(t, ref)
			d := b.diagnose(t, ref)
			if d.State != c.state || !strings.Contains(d.Reason, c.reason) || !strings.Contains(d.Verdict(), c.verdict) {
				t.Fatalf("state %q reason %q verdict %q; want %q, reason ~ %q, verdict ~ %q",
					d.State, d.Reason, d.Verdict(), c.state, c.reason, c.verdict)
			}
			t.Logf("%-13s %s", d.State, d.Verdict())
			if d.Behind > 0 && (d.Since == nil || d.AgeSeconds < 0) {
				t.Fatalf("behind without an age: %+v", d)
			}
		})
	}

	// stale ranks what is behind on live demand first, oldest first, then
	// the outdated; the current and never-demanded are not listed.
	list, err := b.ledger.Stale(b.ctx, 100, oc())
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, d := range list {
		states = append(states, d.State)
	}
	got := strings.Join(states, ",")
	if len(list) != 8 || list[len(list)-1].State != postgres.StateOutdated || strings.Contains(got, postgres.StateCurrent) {
		t.Fatalf("stale listed %s", got)
	}
	for i := 1; i < len(list)-1; i++ {
		if list[i-1].AgeSeconds+0.001 < list[i].AgeSeconds {
			t.Fatalf("stale not oldest first: %s (%.1f) before %s (%.1f)", list[i-1].State, list[i-1].AgeSeconds, list[i].State, list[i].AgeSeconds)
		}
	}
	if short, _ := b.ledger.Stale(b.ctx, 2, oc()); len(short) != 2 {
		t.Fatalf("--limit 2 gave %d", len(short))
	}
}

func TestDiagnoseRefusesUnknownAndOtherFirmsMatters(t *testing.T) {
	b := setup(t, rail.Config{})
	if _, err := b.ledger.Diagnose(b.ctx, rail.MatterRef{FirmID: b.ref.FirmID, MatterID: uuid.New()}, oc()); !errors.Is(err, rail.ErrUnknownMatter) {
		t.Fatalf("unknown matter: %v", err)
	}
	if _, err := b.ledger.Diagnose(b.ctx, rail.MatterRef{FirmID: uuid.New(), MatterID: b.ref.MatterID}, oc()); !errors.Is(err, rail.ErrFirmMismatch) {
		t.Fatalf("other firm's matter: %v", err)
	}
	if _, err := b.ledger.Why(b.ctx, rail.MatterRef{FirmID: uuid.New(), MatterID: b.ref.MatterID}, oc(), 0); !errors.Is(err, rail.ErrFirmMismatch) {
		t.Fatalf("why on another firm's matter: %v", err)
	}
}

func (b *bundle) oneDemand(t *testing.T, ref rail.MatterRef) {
	t.Helper()
	if _, err := b.ledger.Demand(b.ctx, ref, 1); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) claimOn(t *testing.T, ref rail.MatterRef, worker string) rail.Claim {
	t.Helper()
	c, ok, err := b.ledger.Claim(b.ctx, ref, worker)
	if err != nil || !ok {
		t.Fatalf("claim %s: ok=%v err=%v", ref, ok, err)
	}
	return c
}

func (b *bundle) landWith(t *testing.T, ref rail.MatterRef, f rail.Frame) rail.CommitResult {
	t.Helper()
	b.oneDemand(t, ref)
	c := b.claimOn(t, ref, "w")
	r, err := b.ledger.Commit(b.ctx, c, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
