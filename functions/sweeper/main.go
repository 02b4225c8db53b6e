// Command sweeper is the sweeper Lambda: invoked every minute by EventBridge
// Scheduler, it quarantines poison matters, re-nudges lost demand, prunes
// the outbox and the trigger inbox, and emits the freshness gauges.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/app"
)

func main() {
	f, err := app.ForLambda(context.Background(), app.Sweeper)
	if err != nil {
		app.Fatal(app.Sweeper, err)
	}
	lambda.StartWithOptions(f.Sweeper.Handle, lambda.WithEnableSIGTERM(f.Close))
}
