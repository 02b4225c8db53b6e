// Command trigger is the trigger Lambda: demand facts from the trigger queue
// become ledger demand and one build-queue nudge per matter.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

func main() {
	cfg, deps, err := railfn.Setup(context.Background(), railfn.Trigger)
	if err != nil {
		railfn.Fatal(deps.Log, railfn.Trigger, err)
	}
	h := railfn.NewTrigger(cfg, deps)
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
