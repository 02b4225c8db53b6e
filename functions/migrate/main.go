// Command migrate is the migrate Lambda: it applies the embedded schema
// migrations as the schema owner, on every deploy through the stack's
// SchemaMigration custom resource, or by hand with {"action":"migrate"}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

func main() {
	cfg, deps, err := lambdafn.Setup(context.Background(), lambdafn.Migrate)
	if err != nil {
		lambdafn.Fatal(deps.Log, lambdafn.Migrate, err)
	}
	h := lambdafn.NewMigrate(cfg, deps)
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
