package localbus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// One firm's backlog of 100 and then five small firms' single messages:
// fair delivery serves every small firm within the next receives (the big
// firm has one in flight, they have none), while send order would make them
// wait behind the whole backlog.
func TestFairDeliveryServesSmallTenantsAheadOfABacklog(t *testing.T) {
	for _, fair := range []bool{true, false} {
		clk := newClock()
		q := NewQueue(QueueConfig{Name: "q", Visibility: time.Minute, Now: clk.Now})
		q.SetFair(fair)
		for range 100 {
			if _, err := q.SendGroup("big", 0, "", "firm-big"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			if _, err := q.SendGroup("small", 0, "", "firm-small-"+string(rune('a'+i))); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for range 6 { // a builder taking one message per invocation, six times
			for _, m := range receive(t, q, 1, 0) {
				got = append(got, m.Attributes["MessageGroupId"])
			}
		}
		small := 0
		for _, g := range got {
			if strings.HasPrefix(g, "firm-small-") {
				small++
			}
		}
		switch {
		case fair && (small != 5 || got[0] != "firm-big"):
			t.Fatalf("fair: six receives gave %v: want the big firm's oldest, then all five small firms", got)
		case !fair && small != 0:
			t.Fatalf("unfair (send order): six receives gave %v: want only the backlog", got)
		}
	}
}

// A batch receive interleaves groups by in-flight count, and in-flight
// messages count: with ten of the big firm's messages in flight, a new
// small firm's message goes first; once in-flight messages are deleted, the
// backlog flows again (work-conserving: a receive never comes back empty
// while a message is visible).
func TestFairDeliveryCountsInFlightAndIsWorkConserving(t *testing.T) {
	clk := newClock()
	q := NewQueue(QueueConfig{Name: "q", Visibility: time.Minute, Now: clk.Now})
	for range 30 {
		q.SendGroup("big", 0, "", "big")
	}
	held := receive(t, q, 10, 0)
	if len(held) != 10 {
		t.Fatalf("got %d, want 10", len(held))
	}
	q.SendGroup("a", 0, "", "a")
	q.SendGroup("b1", 0, "", "b")
	q.SendGroup("b2", 0, "", "b")
	var bodies []string
	for _, m := range receive(t, q, 3, 0) {
		bodies = append(bodies, m.Body)
	}
	if strings.Join(bodies, ",") != "a,b1,b2" {
		t.Fatalf("with the big firm at 10 in flight got %v, want a,b1,b2", bodies)
	}
	for _, m := range held {
		if err := q.Delete(m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for {
		msgs := receive(t, q, 10, 0)
		if len(msgs) == 0 {
			break
		}
		n += len(msgs)
	}
	if n != 20 || q.Stats().Visible != 0 {
		t.Fatalf("drained %d of the backlog's remaining 20; stats %+v", n, q.Stats())
	}
	// Redrive keeps the group: a dead-lettered message is still its firm's.
	dlq := NewQueue(QueueConfig{Name: "dlq", Now: clk.Now})
	r := NewQueue(QueueConfig{Name: "r", Visibility: 10 * time.Millisecond, MaxReceiveCount: 1, DLQ: dlq, Now: clk.Now})
	r.SendGroup("poison", 0, "", "firm-p")
	receive(t, r, 1, 0)
	clk.Advance(20 * time.Millisecond)
	receive(t, r, 1, 0)
	if d := receive(t, dlq, 1, 0); len(d) != 1 || d[0].Attributes["MessageGroupId"] != "firm-p" {
		t.Fatalf("dead-lettered: %+v", d)
	}
	if _, err := q.SendGroup("x", 0, "", strings.Repeat("g", 129)); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("a 129-character group id: %v", err)
	}
}

// The Nudger sends every nudge with its firm id as the message group.
func TestNudgerGroupsByFirm(t *testing.T) {
	q := NewQueue(QueueConfig{Name: "build", Visibility: time.Minute})
	firm := uuid.New()
	if err := (&Nudger{Queue: q, Exact: true}).Nudge(context.Background(),
		[]rail.Nudge{{V: 1, FirmID: firm, MatterID: uuid.New(), Reason: rail.ReasonRetry}}, 0); err != nil {
		t.Fatal(err)
	}
	if m := receive(t, q, 1, 0); len(m) != 1 || m[0].Attributes["MessageGroupId"] != firm.String() {
		t.Fatalf("%+v", m)
	}
}
