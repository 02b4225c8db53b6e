// Command sweeper is the sweeper Lambda: invoked every minute by EventBridge
// Scheduler, it quarantines poison matters, re-nudges lost demand, prunes
// the outbox and the trigger inbox, and emits the freshness gauges.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

func main() {
	cfg, deps, err := railfn.Setup(context.Background(), railfn.Sweeper)
	if err != nil {
		railfn.Fatal(deps.Log, railfn.Sweeper, err)
	}
	h := railfn.NewSweeper(cfg, deps)
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
