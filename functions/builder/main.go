// Command builder is the builder Lambda: a nudge from the build queue
// claims the matter, builds its Brief under a heartbeat lease and commits
// fenced, with one follow-up nudge when demand arrived during the build.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/app"
)

func main() {
	f, err := app.ForLambda(context.Background(), app.Builder)
	if err != nil {
		app.Fatal(app.Builder, err)
	}
	lambda.StartWithOptions(f.Builder.Handle, lambda.WithEnableSIGTERM(f.Close))
}
