// Command builder is the builder Lambda: a nudge from the build queue
// claims the matter, builds its Brief under a heartbeat lease and commits
// fenced, with one follow-up nudge when demand arrived during the build.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

func main() {
	cfg, deps, err := railfn.Setup(context.Background(), railfn.Builder)
	if err != nil {
		railfn.Fatal(deps.Log, railfn.Builder, err)
	}
	h := railfn.NewBuilder(cfg, deps, railfn.FrameBuilder(cfg, deps.AWS))
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
