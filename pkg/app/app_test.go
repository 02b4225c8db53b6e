package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/rail"
)

func TestMain(m *testing.M) { railtest.Main(m) }

// lambdaEnv is a function's environment over a migrated test database (a
// function checks the schema version at cold start).
func lambdaEnv(t *testing.T) {
	t.Setenv("DATABASE_URL", railtest.NewDB(t).URL)
	t.Setenv("RAIL_BUILD_QUEUE_URL", "http://127.0.0.1:1/000000000000/build")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
}

// TestForLambdaAssemblesEveryFunction: each function's main gets its
// handler from the one assembly, configured from the environment.
func TestForLambdaAssemblesEveryFunction(t *testing.T) {
	lambdaEnv(t)
	t.Setenv("RAIL_LEASE", "7m")
	ctx := context.Background()
	for _, fn := range []string{app.Relay, app.Trigger, app.Builder, app.Sweeper, app.Migrate} {
		f, err := app.ForLambda(ctx, fn)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if f.Relay == nil || f.Trigger == nil || f.Builder == nil || f.Sweeper == nil || f.Migrate == nil {
			t.Fatalf("%s: a handler is missing: %+v", fn, f.Rail)
		}
		if got := f.Builder.Worker.Ledger.Config().Lease.String(); got != "7m0s" {
			t.Errorf("%s: the builder's lease is %s, want RAIL_LEASE's 7m0s", fn, got)
		}
		if want := brief.NewExtractive().Name(); fn == app.Builder && f.Builder.Worker.Builder.Name() != want {
			t.Errorf("builder: default Brief builder %q, want %s", f.Builder.Worker.Builder.Name(), want)
		}
		f.Close()
	}
}

// TestForLambdaRefusesABadBuilder: a builder function configured for
// Bedrock without a model fails its cold start, naming the variable.
func TestForLambdaRefusesABadBuilder(t *testing.T) {
	lambdaEnv(t)
	t.Setenv("RAIL_BRIEF_BUILDER", "bedrock")
	_, err := app.ForLambda(context.Background(), app.Builder)
	if err == nil || !strings.Contains(err.Error(), "RAIL_BEDROCK_MODEL_ID") {
		t.Fatalf("err = %v, want one naming RAIL_BEDROCK_MODEL_ID", err)
	}
}

// TestBuilderRegistry: every registered name makes a builder; an unknown
// one is refused with the list.
func TestBuilderRegistry(t *testing.T) {
	ctx := context.Background()
	names := app.BuilderNames()
	if strings.Join(names, ",") != "bedrock,digest,extractive" {
		t.Fatalf("BuilderNames() = %v", names)
	}
	for _, n := range names {
		fb, err := app.NewFrameBuilder(ctx, n, app.BuilderOptions{BedrockModelID: "anthropic.claude-test", AWS: &aws.Config{Region: "us-east-1"}})
		if err != nil || fb == nil || fb.Name() == "" {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := app.NewFrameBuilder(ctx, "gpt", app.BuilderOptions{}); err == nil || !strings.Contains(err.Error(), "extractive") {
		t.Errorf("unknown builder: err = %v", err)
	}
}

// TestDeployedIdentityIsTheBuildersOwn: the identity a configuration
// deploys (lambdafn.Config.DeployedIdentity, which the sweeper and railctl
// compare frames against) is exactly the identity the builder the registry
// makes for it records on its frames; otherwise every matter would read as
// outdated (or none would).
func TestDeployedIdentityIsTheBuildersOwn(t *testing.T) {
	const model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	ctx := context.Background()
	opts := app.BuilderOptions{BedrockModelID: model, AWS: &aws.Config{Region: "us-east-1"}}
	for _, name := range app.BuilderNames() {
		fb, err := app.NewFrameBuilder(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		dep, err := lambdafn.Config{BriefBuilder: name, BedrockModelID: model}.DeployedIdentity()
		if err != nil {
			t.Fatal(err)
		}
		if got := rail.IdentityOf(fb); got != dep {
			t.Errorf("%s: builder identity %+v, deployed identity %+v", name, got, dep)
		}
	}
	bd, _ := lambdafn.Config{BriefBuilder: "bedrock", BedrockModelID: model}.DeployedIdentity()
	if bd.ModelID != model || bd.PromptHash != brief.PromptHash() || bd.Version != brief.SchemaVersion {
		t.Errorf("bedrock identity %+v: want model, prompt hash and schema version", bd)
	}
	if other, _ := (lambdafn.Config{BriefBuilder: "bedrock", BedrockModelID: "amazon.nova-pro-v1:0"}).DeployedIdentity(); other == bd {
		t.Error("a different model id must be a different identity")
	}
	if dflt, _ := (lambdafn.Config{}).DeployedIdentity(); dflt != brief.NewExtractive().Identity() {
		t.Errorf("default deployed identity %+v, want the extractive builder's", dflt)
	}
	if _, err := (lambdafn.Config{BriefBuilder: "bedrock"}).DeployedIdentity(); err == nil {
		t.Error("bedrock without a model id accepted")
	}
	if _, err := (lambdafn.Config{BriefBuilder: "gpt"}).DeployedIdentity(); err == nil {
		t.Error("unknown builder accepted")
	}
}
