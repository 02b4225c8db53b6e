package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// Brief builder names (RAIL_BRIEF_BUILDER, railctl's --builder).
const (
	BuilderExtractive = "extractive" // deterministic, no network; every item cites document and page
	BuilderBedrock    = "bedrock"    // Amazon Bedrock (Converse), RAIL_BEDROCK_MODEL_ID
	BuilderDigest     = "digest"     // the placeholder: names, hashes and page counts only
)

// BuilderOptions is what a builder may need to be made.
type BuilderOptions struct {
	BedrockModelID string
	// BedrockMaxTokens is the request's output-token limit; 0 is the
	// model's own (bedrock.DefaultMaxTokens).
	BedrockMaxTokens int
	// AWS is the SDK configuration for Bedrock; nil loads the default one
	// (credentials and region from the usual places).
	AWS *aws.Config
}

// builders is the one registry of Brief builders: the builder function
// and every railctl command pick from it by name.
var builders = map[string]func(context.Context, BuilderOptions) (rail.FrameBuilder, error){
	BuilderDigest: func(context.Context, BuilderOptions) (rail.FrameBuilder, error) { return rail.DigestBuilder{}, nil },
	BuilderExtractive: func(context.Context, BuilderOptions) (rail.FrameBuilder, error) {
		return brief.ForRail(brief.NewExtractive()), nil
	},
	BuilderBedrock: func(ctx context.Context, o BuilderOptions) (rail.FrameBuilder, error) {
		if o.BedrockModelID == "" {
			return nil, errors.New("the bedrock builder needs RAIL_BEDROCK_MODEL_ID (a Bedrock model id)")
		}
		cfg := o.AWS
		if cfg == nil {
			c, err := awsconfig.LoadDefaultConfig(ctx)
			if err != nil {
				return nil, fmt.Errorf("AWS configuration for Bedrock: %w", err)
			}
			cfg = &c
		}
		return brief.ForRail(bedrock.New(bedrockruntime.NewFromConfig(*cfg), o.BedrockModelID, bedrock.WithMaxTokens(o.BedrockMaxTokens))), nil
	},
}

// BuilderNames lists the registered builders, sorted.
func BuilderNames() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewFrameBuilder makes the builder registered under name.
func NewFrameBuilder(ctx context.Context, name string, o BuilderOptions) (rail.FrameBuilder, error) {
	mk, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("unknown builder %q (want one of %v)", name, BuilderNames())
	}
	return mk(ctx, o)
}
