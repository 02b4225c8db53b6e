//go:build unix

package motoserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/pramaan/brief-rail/internal/testenv/proc"
)

// Region and the dummy credentials AWSConfig and Env use; moto accepts any.
const (
	Region          = "us-east-1"
	AccessKeyID     = "test"
	SecretAccessKey = "test"
)

// ErrNotInstalled is wrapped by Start's error when moto_server is missing.
var ErrNotInstalled = errors.New(`motoserver: moto_server not found; install it with pip install "moto[server]"`)

const (
	defaultStartTimeout = 60 * time.Second
	portAttempts        = 5
	stopTimeout         = 5 * time.Second
	outputKeep          = 8 << 10
)

// Server is a running moto_server. Its methods are safe for concurrent use.
type Server struct {
	endpoint string
	proc     *proc.Process
	out      *tailBuffer
	client   *http.Client

	stopOnce sync.Once
	stopErr  error
}

// pickPort chooses the port of each start (a variable so a test can hand out
// a taken one).
var pickPort = proc.FreePort

// Start launches moto_server on a free port of 127.0.0.1 and returns once it
// answers HTTP. ctx bounds the startup only (one minute if it has no
// deadline). logf, if not nil, receives progress messages.
func Start(ctx context.Context, logf func(string, ...any)) (*Server, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotInstalled, err)
	}
	for attempt := 1; ; attempt++ {
		port, err := pickPort()
		if err != nil {
			return nil, fmt.Errorf("motoserver: %w", err)
		}
		s, err := start(ctx, bin, port)
		if err == nil {
			logf("motoserver: moto_server ready at %s", s.endpoint)
			return s, nil
		}
		if errors.Is(err, errPortInUse) && attempt < portAttempts && ctx.Err() == nil {
			logf("motoserver: port %d was taken before moto_server bound it; trying another", port)
			continue
		}
		return nil, err
	}
}

var errPortInUse = errors.New("port already in use")

func start(ctx context.Context, bin string, port int) (*Server, error) {
	s := &Server{
		endpoint: "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		out:      &tailBuffer{max: outputKeep},
		client:   &http.Client{Timeout: 5 * time.Second},
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout = s.out
	cmd.Stderr = s.out
	cmd.SysProcAttr = procAttr()
	// The output is copied through a pipe; don't let a stray grandchild
	// holding it keep Wait from returning.
	cmd.WaitDelay = time.Second
	var err error
	if s.proc, err = proc.Start(cmd); err != nil {
		return nil, fmt.Errorf("motoserver: start %s: %w", bin, err)
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	err := proc.Poll(ctx, 50*time.Millisecond, s.proc.Exited(), s.ping)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proc.ErrExited):
		out := s.out.String()
		err := fmt.Errorf("motoserver: moto_server exited during startup (%v); output:\n%s", s.proc.Err(), out)
		switch {
		case strings.Contains(out, "Address already in use") || strings.Contains(out, "is in use by another program"):
			err = fmt.Errorf("%w: %w", errPortInUse, err)
		case strings.Contains(out, "command not found") || strings.Contains(out, "No module named"):
			err = fmt.Errorf("%w: %w", ErrNotInstalled, err)
		}
		return err
	default:
		return fmt.Errorf("motoserver: moto_server at %s not ready: %w; output:\n%s", s.endpoint, err, s.out.String())
	}
}

// ping succeeds when moto's own API answers (not just anything on the port).
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint+"/moto-api/", nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /moto-api/: %s", resp.Status)
	}
	return nil
}

// Endpoint is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return s.endpoint }

// Reset discards every emulated resource (queues, buses, buckets, ...), as
// POST /moto-api/reset does.
func (s *Server) Reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint+"/moto-api/reset", nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("motoserver: reset: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("motoserver: reset: %s: %s", resp.Status, body)
	}
	return nil
}

// AWSConfig returns an SDK configuration aimed at the server: base endpoint
// Endpoint(), region us-east-1 and static dummy credentials. It is loaded
// with config.LoadDefaultConfig, so other settings (retries, for instance)
// still come from the environment as usual; note that a service-specific
// AWS_ENDPOINT_URL_<SERVICE> variable would win over the base endpoint.
// S3 clients additionally need path-style addressing (o.UsePathStyle = true).
func (s *Server) AWSConfig(ctx context.Context) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx,
		config.WithRegion(Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, "")),
		config.WithBaseEndpoint(s.endpoint),
	)
}

// Env returns the environment variables that point an SDK-based child
// process (a Lambda main run locally, say) at the server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.endpoint,
		"AWS_REGION=" + Region,
		"AWS_DEFAULT_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + SecretAccessKey,
	}
}

// Stop terminates moto_server's whole process group (SIGTERM, then SIGKILL
// after a few seconds) and waits for it. Calling it again returns the first
// result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	s.proc.Stop(stopTimeout)
	return nil
}

// Output returns the last few kilobytes moto_server wrote (its request log).
func (s *Server) Output() string { return s.out.String() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimRight(b.buf, "\n"))
}
