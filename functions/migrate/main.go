// Command migrate is the migrate Lambda: it applies the embedded schema
// migrations as the schema owner, on every deploy through the stack's
// SchemaMigration custom resource, or by hand with {"action":"migrate"}.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/pramaan/brief-rail/pkg/app"
)

func main() {
	f, err := app.ForLambda(context.Background(), app.Migrate)
	if err != nil {
		app.Fatal(app.Migrate, err)
	}
	lambda.StartWithOptions(f.Migrate.Handle, lambda.WithEnableSIGTERM(f.Close))
}
