// Command relay is the relay Lambda: invoked every minute by EventBridge
// Scheduler, it drains the outbox to the event bus for RAIL_RELAY_WINDOW.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

func main() {
	cfg, deps, err := railfn.Setup(context.Background(), railfn.Relay)
	if err != nil {
		railfn.Fatal(deps.Log, railfn.Relay, err)
	}
	h := railfn.NewRelay(cfg, deps)
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
