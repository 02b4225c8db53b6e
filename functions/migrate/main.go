// Command migrate is the migrate Lambda: it applies the embedded schema
// migrations as the schema owner, on every deploy through the stack's
// SchemaMigration custom resource, or by hand with {"action":"migrate"}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

func main() {
	cfg, deps, err := railfn.Setup(context.Background(), railfn.Migrate)
	if err != nil {
		railfn.Fatal(deps.Log, railfn.Migrate, err)
	}
	h := railfn.NewMigrate(cfg, deps)
	lambda.StartWithOptions(h.Handle, lambda.WithEnableSIGTERM(deps.Close))
}
