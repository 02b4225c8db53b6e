package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var builders = map[string]func(context.Context) (rail.FrameBuilder, error){
	"digest":     func(context.Context) (rail.FrameBuilder, error) { return rail.DigestBuilder{}, nil },
	"extractive": func(context.Context) (rail.FrameBuilder, error) { return brief.ForRail(brief.NewExtractive()), nil },
	// Amazon Bedrock (Converse): the model from RAIL_BEDROCK_MODEL_ID, AWS
	// credentials and region from the usual places.
	"bedrock": func(ctx context.Context) (rail.FrameBuilder, error) {
		model := os.Getenv("RAIL_BEDROCK_MODEL_ID")
		if model == "" {
			return nil, errors.New("the bedrock builder needs RAIL_BEDROCK_MODEL_ID (a Bedrock model id)")
		}
		acfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration for Bedrock: %w", err)
		}
		return brief.ForRail(brief.NewBedrock(bedrockruntime.NewFromConfig(acfg), model)), nil
	},
}

func builderNames() []string {
	var names []string
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func frameBuilder(ctx context.Context, name string) (rail.FrameBuilder, error) {
	mk, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("unknown builder %q (want one of %v)", name, builderNames())
	}
	return mk(ctx)
}
