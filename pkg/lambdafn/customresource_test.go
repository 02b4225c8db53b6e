package lambdafn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// The reply body stays within CloudFormation's 4,096 bytes whatever the
// reason holds: the cut is measured after JSON escaping (a reason of '<'
// and control characters grows six-fold when escaped).
func TestEncodeResponseStaysWithinTheLimit(t *testing.T) {
	base := cfn.Response{Status: cfn.StatusFailed, RequestID: strings.Repeat("r", 36),
		LogicalResourceID: "SchemaMigrationV2", PhysicalResourceID: lambdafn.SchemaResourceID,
		StackID: "arn:aws:cloudformation:eu-west-1:123456789012:stack/brief-rail-prod/0b1c2d3e-4f50-11ef-9a6b-0a1b2c3d4e5f"}
	for name, reason := range map[string]string{
		"ascii":          strings.Repeat("x", 10000),
		"html":           strings.Repeat("<&>", 4000),
		"control":        strings.Repeat("\x01\n\t\"\\", 3000),
		"multibyte":      strings.Repeat("é€😀", 2000),
		"invalid utf-8":  strings.Repeat("ok\xff", 3000),
		"just over 3000": strings.Repeat("a", 3001),
	} {
		r := base
		r.Reason = reason
		body, err := lambdafn.EncodeResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(body) > 4096 {
			t.Errorf("%s: reply body is %d bytes, over 4,096", name, len(body))
		}
		var back cfn.Response
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		esc, _ := json.Marshal(back.Reason)
		if len(esc)-2 > 3000 {
			t.Errorf("%s: escaped reason is %d bytes, over 3,000", name, len(esc)-2)
		}
		if !strings.HasSuffix(back.Reason, "…") || !utf8.ValidString(back.Reason) || len(back.Reason) < 100 {
			t.Errorf("%s: reason %.40q… (%d bytes) is not a valid cut", name, back.Reason, len(back.Reason))
		}
	}
	short := base
	short.Reason = "migrate: 003_trigger_inbox.sql: relation already exists"
	body, err := lambdafn.EncodeResponse(short)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"Reason":"migrate: 003_trigger_inbox.sql: relation already exists"`) {
		t.Fatalf("a short reason was altered: %s", body)
	}
}

// The function replies only to CloudFormation's S3 response endpoints
// (the shapes CloudFormation sends), and to what RAIL_RESPONSE_URL_PREFIXES
// adds.
func TestCheckResponseURL(t *testing.T) {
	for _, ok := range []string{
		"https://cloudformation-custom-resource-response-euwest1.s3-eu-west-1.amazonaws.com/arn%3Aaws%3Acloudformation%3Aeu-west-1%3A123456789012%3Astack/brief-rail/0b1c%7CSchemaMigration%7C9f8e?X-Amz-Algorithm=AWS4-HMAC-SHA256",
		"https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/x",
		"https://cloudformation-custom-resource-response-useast1.s3.us-east-1.amazonaws.com/x",
		"https://cloudformation-custom-resource-response-cnnorth1.s3.cn-north-1.amazonaws.com.cn/x",
		"https://cloudformation-custom-resource-response-apnortheast1.s3-ap-northeast-1.amazonaws.com:443/x",
	} {
		if err := lambdafn.CheckResponseURL(ok, nil); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"http://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/x",          // not https
		"https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com.evil.io/x", // suffix
		"https://evil.io/cloudformation-custom-resource-response-useast1.s3.amazonaws.com/x",
		"https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com:8443/x",
		"https://u:p@cloudformation-custom-resource-response-useast1.s3.amazonaws.com/x",
		"https://169.254.169.254/latest/meta-data/",
		"https://my-bucket.s3.amazonaws.com/x",
		"http://127.0.0.1:9000/reply",
	} {
		if err := lambdafn.CheckResponseURL(bad, nil); !errors.Is(err, lambdafn.ErrResponseURLRefused) {
			t.Errorf("%s accepted (err %v)", bad, err)
		}
	}
	if err := lambdafn.CheckResponseURL("http://127.0.0.1:9000/reply/1", []string{"http://127.0.0.1:9000/"}); err != nil {
		t.Errorf("a prefix from RAIL_RESPONSE_URL_PREFIXES refused: %v", err)
	}
}

// The reply client gives up on an endpoint that never answers, and retries
// one that refuses, within its context: never past the deadline.
func TestReplierIsBounded(t *testing.T) {
	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer hanging.Close()
	defer close(hang)
	r := lambdafn.NewReplier(500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	started := time.Now()
	err := r.Send(ctx, hanging.URL, []byte(`{}`))
	if err == nil || time.Since(started) > 2200*time.Millisecond {
		t.Fatalf("hanging endpoint: err %v after %s", err, time.Since(started))
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/reply"
	_ = l.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	started = time.Now()
	err = r.Send(ctx2, refused, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "attempt ") || strings.Contains(err.Error(), "attempt 1:") {
		t.Fatalf("refusing endpoint: want several attempts, got %v", err)
	}
	if time.Since(started) > 2200*time.Millisecond {
		t.Fatalf("refusing endpoint: gave up after %s, past the deadline", time.Since(started))
	}

	// A 5xx is retried; the retry that gets 200 ends it.
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Content-Type") != "" {
			w.WriteHeader(http.StatusForbidden) // the presigned URL is signed without one
			return
		}
	}))
	defer flaky.Close()
	if err := r.Send(context.Background(), flaky.URL, []byte(`{}`)); err != nil || calls.Load() != 2 {
		t.Fatalf("flaky endpoint: err %v after %d calls", err, calls.Load())
	}
}
