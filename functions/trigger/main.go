// Command trigger is the trigger Lambda: demand facts from the trigger queue
// become ledger demand and one build-queue nudge per matter.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/app"
)

func main() {
	f, err := app.ForLambda(context.Background(), app.Trigger)
	if err != nil {
		app.Fatal(app.Trigger, err)
	}
	lambda.StartWithOptions(f.Trigger.Handle, lambda.WithEnableSIGTERM(f.Close))
}
