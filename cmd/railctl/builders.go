package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

var builders = map[string]func(context.Context) (rail.FrameBuilder, error){
	"digest":     func(context.Context) (rail.FrameBuilder, error) { return rail.DigestBuilder{}, nil },
	"extractive": func(context.Context) (rail.FrameBuilder, error) { return brief.ForRail(brief.NewExtractive()), nil },
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
