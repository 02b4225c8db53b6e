//go:build unix

package motoserver

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/proc"
)

func startServer(t *testing.T) *Server {
	t.Helper()
	if _, err := exec.LookPath("moto_server"); err != nil {
		ci.MissingTool(t, ErrNotInstalled.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func TestSQSRoundTripAndStop(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	cfg, err := s.AWSConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "us-east-1" || cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != s.Endpoint() {
		t.Fatalf("config region %q endpoint %v, want us-east-1 %s", cfg.Region, cfg.BaseEndpoint, s.Endpoint())
	}
	client := sqs.NewFromConfig(cfg)

	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("build-queue")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:    created.QueueUrl,
		MessageBody: aws.String(`{"v":1,"reason":"demand"}`),
	}); err != nil {
		t.Fatal(err)
	}
	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: created.QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != `{"v":1,"reason":"demand"}` {
		t.Fatalf("received %+v", got.Messages)
	}

	// Reset forgets the queue.
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := client.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.QueueUrls) != 0 {
		t.Fatalf("queues after Reset: %v", list.QueueUrls)
	}

	pid := s.proc.Pid()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	host := s.Endpoint()[len("http://"):]
	if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", host)
	}
	// The group is empty: nothing is left to signal.
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Stop (kill: %v)", pid, err)
	}
}

// A port taken between picking and binding makes Start try another one.
func TestPortRaceRetries(t *testing.T) {
	race, err := proc.NewPortRace()
	if err != nil {
		t.Fatal(err)
	}
	defer race.Close()
	pickPort = race.Pick
	defer func() { pickPort = proc.FreePort }()

	s := startServer(t)
	if race.Picks < 2 || s.Endpoint() == "http://127.0.0.1:"+strconv.Itoa(race.Taken) {
		t.Fatalf("endpoint %s after %d picks; the taken port was %d", s.Endpoint(), race.Picks, race.Taken)
	}
}

func TestMissingBinarySaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), nil)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), `pip install "moto[server]"`) {
		t.Fatalf("Start without moto_server: %v", err)
	}
}
