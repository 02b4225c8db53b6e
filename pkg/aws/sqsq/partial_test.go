package sqsq_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// fakeSQS answers SendMessageBatch over the awsJson1.0 protocol, for what
// moto cannot do: fail some entries of a batch (Failed, not SenderFault:
// retryable) while accepting the others.
type fakeSQS struct {
	mu       sync.Mutex
	refuse   map[string]bool // matter_id -> fail the entry, every time
	accepted map[string]int  // matter_id -> times accepted
}

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("X-Amz-Target"); got != "AmazonSQS.SendMessageBatch" {
		http.Error(w, "unexpected target "+got, http.StatusBadRequest)
		return
	}
	var in struct {
		Entries []struct{ Id, MessageBody string }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	type ok struct{ Id, MessageId, MD5OfMessageBody string }
	type failed struct {
		Id, Code, Message string
		SenderFault       bool
	}
	var out struct {
		Successful []ok
		Failed     []failed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range in.Entries {
		nd, err := sqsq.DecodeNudge(e.MessageBody)
		if err != nil || f.refuse[nd.MatterID.String()] {
			out.Failed = append(out.Failed, failed{Id: e.Id, Code: "InternalError", Message: "refused by the test"})
			continue
		}
		sum := md5.Sum([]byte(e.MessageBody))
		out.Successful = append(out.Successful, ok{Id: e.Id, MessageId: uuid.NewString(), MD5OfMessageBody: hex.EncodeToString(sum[:])})
		f.accepted[nd.MatterID.String()]++
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(out)
}

// A SendMessageBatch that SQS partly accepts is reported nudge by nudge:
// the error names exactly the nudges not sent, and the nudge record
// (ops.matter_nudges, what `railctl why` shows) marks those as refused and
// the others as sent. (Before, the one joined error was recorded on every
// nudge of the call: the sent ones showed as refused.)
func TestPartlyFailedBatchIsRecordedNudgeByNudge(t *testing.T) {
	t.Parallel()
	f := &fakeSQS{refuse: map[string]bool{}, accepted: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := sqs.NewFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	n := sqsq.NewNudger(client, srv.URL+"/000000000000/build")
	n.Backoff = time.Millisecond
	db := railtest.NewDB(t)
	ctx := context.Background()

	var nudges []rail.Nudge
	refused := map[int]bool{3: true, 11: true} // one in each SendMessageBatch of ten
	for i := range 14 {
		nd := rail.Nudge{V: 1, FirmID: uuid.New(), MatterID: uuid.New(), Reason: rail.ReasonSweep}
		// the nudge record names matters that exist (its key to app.matters)
		if _, err := postgres.AddMatter(ctx, db.Pool, nd.Ref(), ""); err != nil {
			t.Fatal(err)
		}
		if refused[i] {
			f.refuse[nd.MatterID.String()] = true
		}
		nudges = append(nudges, nd)
	}
	rec := &postgres.RecordingNudger{Next: n, DB: db.Pool}
	err := rec.Nudge(ctx, nudges, 0)
	var ne *rail.NudgeError
	if !errors.As(err, &ne) || len(ne.Failed) != len(refused) {
		t.Fatalf("Nudge: %v; want a rail.NudgeError naming the %d refused nudges", err, len(refused))
	}
	for i := range nudges {
		if (rail.NudgeFailed(err, i) != nil) != refused[i] {
			t.Errorf("nudge %d: failed %v, want %v", i, rail.NudgeFailed(err, i), refused[i])
		}
		if got := f.accepted[nudges[i].MatterID.String()]; got != map[bool]int{false: 1, true: 0}[refused[i]] {
			t.Errorf("nudge %d accepted %d times", i, got)
		}
	}
	rows, err := db.Pool.Query(ctx, `SELECT matter_id::text, error FROM ops.matter_nudges`)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for rows.Next() {
		var m, e string
		if err := rows.Scan(&m, &e); err != nil {
			t.Fatal(err)
		}
		recorded[m] = e
	}
	if rows.Err() != nil || len(recorded) != len(nudges) {
		t.Fatalf("%d nudges recorded (%v), want %d", len(recorded), rows.Err(), len(nudges))
	}
	for i, nd := range nudges {
		e := recorded[nd.MatterID.String()]
		if refused[i] != (e != "") {
			t.Errorf("nudge %d recorded with error %q; refused %v", i, e, refused[i])
		}
	}
}
