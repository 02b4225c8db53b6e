package brief

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// ForRail adapts a Brief Builder to the rail's FrameBuilder: the frame body
// is the Brief's JSON.
func ForRail(b Builder) rail.FrameBuilder { return railBuilder{b} }

type railBuilder struct{ b Builder }

func (r railBuilder) Name() string { return r.b.Name() }

func (r railBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	// The documents stream from the rail one at a time (uuid order is the
	// order of their lowercase text, as Input.Stream requires).
	bi := Input{FirmID: in.Ref.FirmID.String(), MatterID: in.Ref.MatterID.String(), Title: in.Title,
		Stream: func(ctx context.Context) iter.Seq2[Document, error] {
			return func(yield func(Document, error) bool) {
				for d, err := range in.Documents(ctx) {
					if !yield(Document{ID: d.ID.String(), Name: d.Name, SHA256: d.SHA256, Pages: d.Pages, Note: d.Note}, err) || err != nil {
						return
					}
				}
			}
		}}
	out, err := r.b.Build(ctx, bi)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode brief: %w", err)
	}
	return body, nil
}
