// Command relay is the relay Lambda: invoked every minute by EventBridge
// Scheduler, it drains the outbox to the event bus for RAIL_RELAY_WINDOW.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/app"
)

func main() {
	f, err := app.ForLambda(context.Background(), app.Relay)
	if err != nil {
		app.Fatal(app.Relay, err)
	}
	lambda.StartWithOptions(f.Relay.Handle, lambda.WithEnableSIGTERM(f.Close))
}
