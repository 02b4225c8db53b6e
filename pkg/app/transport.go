package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// Transport is what facts and nudges travel on: the bus the relay
// publishes to, the nudgers that feed the build and backfill queues, and
// (for RunLocal) the queues the trigger and the builders read.
type Transport struct {
	Publisher      rail.Publisher
	Nudger         rail.Nudger // the build queue
	BackfillNudger rail.Nudger // the backfill queue; nil: no backfill
	// The queues RunLocal polls; nil where nothing reads them here (a
	// function, an operator's pass).
	TriggerQueue, BuildQueue, BackfillQueue localbus.Source
}

// ErrNoQueue: a nudge for a queue this process was given no URL for.
var ErrNoQueue = errors.New("no queue to nudge")

// noQueue refuses every nudge, naming the variable that would give it a
// queue: a process without the build queue (the relay, an operator's
// sweep without RAIL_BUILD_QUEUE_URL) says so instead of sending nowhere.
type noQueue struct{ env string }

func (n noQueue) Nudge(context.Context, []rail.Nudge, time.Duration) error {
	return fmt.Errorf("%w: %s is not set, nothing sent", ErrNoQueue, n.env)
}

// AWSTransport is the deployed transport: EventBridge (cfg.EventBus, with
// cfg.EventSource), the build queue at cfg.BuildQueueURL and the backfill
// queue at cfg.BackfillQueueURL (none when empty) over SQS, all with the
// SDK configuration acfg. triggerQueueURL, when not empty, is the trigger
// queue RunLocal polls (in AWS the event source mapping does).
func AWSTransport(acfg aws.Config, cfg Config, triggerQueueURL string) Transport {
	client := sqs.NewFromConfig(acfg)
	t := Transport{Publisher: eventbridge.New(acfg, cfg.EventBus, cfg.EventSource),
		Nudger: noQueue{env: lambdafn.EnvBuildQueueURL}}
	if u := cfg.BuildQueueURL; u != "" {
		t.Nudger, t.BuildQueue = sqsq.NewNudger(client, u), &sqsq.Source{Client: client, URL: u}
	}
	if u := cfg.BackfillQueueURL; u != "" {
		t.BackfillNudger, t.BackfillQueue = sqsq.NewNudger(client, u), &sqsq.Source{Client: client, URL: u}
	}
	if triggerQueueURL != "" {
		t.TriggerQueue = &sqsq.Source{Client: client, URL: triggerQueueURL}
	}
	return t
}

// The template's logical ids of the queues the local transport wires.
const (
	TriggerQueueID  = "TriggerQueue"
	BuildQueueID    = "BuildQueue"
	BackfillQueueID = "BackfillQueue"
	TriggerRuleID   = "TriggerRule" // the rule routing demand facts to the trigger queue
)

// LocalWiring builds the bus and the queues the SAM template at tplPath
// declares, in process (localbus.FromTemplate): the bus carries
// cfg.EventSource's facts with the trigger's rule (TriggerRule), the
// queues keep the template's redrive policies, with their timings
// multiplied by scale, and deliver a message twice with probability
// duplicate (a fault knob; 0 in make run).
func LocalWiring(tplPath string, cfg Config, scale, duplicate float64) (*localbus.Wiring, error) {
	tpl, err := samtemplate.Load(tplPath)
	if err != nil {
		return nil, fmt.Errorf("local wiring is read from the SAM template: %w", err)
	}
	w, err := localbus.FromTemplate(tpl, "local", cfg.EventSource, scale, TriggerRuleID)
	if err != nil {
		return nil, err
	}
	for _, q := range w.Queues {
		q.SetDuplicate(duplicate)
	}
	return w, nil
}

// LocalTransport is the template's bus and queues in process
// (localbus.FromTemplate): the bus, the build and backfill queues'
// nudgers (sub-second delays kept, for scaled-down timings) and the three
// queues to poll. onNudge, if set, hears every nudge sent, with its queue
// (postgres.QueueBuild or postgres.QueueBackfill).
func LocalTransport(w *localbus.Wiring, onNudge func(queue string, n rail.Nudge, delay time.Duration)) Transport {
	nudger := func(id, queue string) rail.Nudger {
		n := &localbus.Nudger{Queue: w.Queue(id), Exact: true}
		if onNudge != nil {
			n.OnNudge = func(nd rail.Nudge, d time.Duration) { onNudge(queue, nd, d) }
		}
		return n
	}
	return Transport{Publisher: w.Bus, Nudger: nudger(BuildQueueID, postgres.QueueBuild),
		BackfillNudger: nudger(BackfillQueueID, postgres.QueueBackfill),
		TriggerQueue:   w.Queue(TriggerQueueID), BuildQueue: w.Queue(BuildQueueID), BackfillQueue: w.Queue(BackfillQueueID)}
}
