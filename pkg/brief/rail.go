package brief

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// ForRail adapts a Brief Builder to the rail's FrameBuilder: the frame body
// is the Brief's JSON.
func ForRail(b Builder) rail.FrameBuilder { return railBuilder{b} }

type railBuilder struct{ b Builder }

func (r railBuilder) Name() string { return r.b.Name() }

func (r railBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	bi := Input{FirmID: in.Ref.FirmID.String(), MatterID: in.Ref.MatterID.String(), Title: in.Title}
	for _, d := range in.Documents {
		bi.Documents = append(bi.Documents, Document{ID: d.ID.String(), Name: d.Name, SHA256: d.SHA256, Pages: d.Pages, Note: d.Note})
	}
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
