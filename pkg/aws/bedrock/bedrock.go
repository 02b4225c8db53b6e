// Package bedrock is the Brief's Amazon Bedrock room: a brief.Builder that
// has a model behind Bedrock's Converse API write the Brief. The prompt, the
// parsing of the reply and the citation check are the Brief's own
// (brief.SystemPrompt, brief.NewPrompt, brief.Prompt.Assemble); this
// package holds the call, the builder's name and its identity.
package bedrock

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// MaxInputChars bounds the page text sent to the model in one call.
const MaxInputChars = 400_000

// Builder builds a Brief with a model behind Amazon Bedrock's Converse API.
// The model writes the caption, parties, chronology, document kinds and
// assertions; matter, document metadata, docket stamps, builder name and
// fingerprint come from the Input; every citation is checked against the
// cleaned page text and the result must pass Validate.
type Builder struct {
	client    *bedrockruntime.Client
	modelID   string
	maxTokens int32
}

// New returns a Bedrock builder calling modelID through client.
func New(client *bedrockruntime.Client, modelID string) *Builder {
	return &Builder{client: client, modelID: modelID, maxTokens: 8192}
}

// Name is "bedrock/v2:" followed by the model id: the prompt revision
// follows the schema version, so the rail rebuilds frames of older schemas.
func (b *Builder) Name() string { return name(b.modelID) }

func name(modelID string) string { return "bedrock/v2:" + modelID }

// Identity is the identity of a Bedrock builder calling modelID (see
// rail.BuilderIdentity): its name, the schema it writes, the model and the
// hash of the prompt. It needs no client: the sweeper and railctl compare
// frames against the deployed builder's identity without building it.
func Identity(modelID string) rail.BuilderIdentity {
	return rail.BuilderIdentity{Name: name(modelID), Version: brief.SchemaVersion, ModelID: modelID, PromptHash: brief.PromptHash()}
}

// Identity is the builder's identity: its model and prompt.
func (b *Builder) Identity() rail.BuilderIdentity { return Identity(b.modelID) }

// Build implements brief.Builder. The model reads the documents' cleaned
// text (doctext.Clean); the citation check runs against the same text.
func (b *Builder) Build(ctx context.Context, in brief.Input) (brief.Brief, error) {
	p, err := brief.NewPrompt(ctx, in, b.Identity(), MaxInputChars)
	if err != nil {
		return brief.Brief{}, err
	}
	out, err := b.client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(b.modelID),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: brief.SystemPrompt}},
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: p.Documents}},
		}},
		InferenceConfig: &types.InferenceConfiguration{
			Temperature: aws.Float32(0),
			MaxTokens:   aws.Int32(b.maxTokens),
		},
	})
	if err != nil {
		return brief.Brief{}, fmt.Errorf("bedrock: converse with %s: %w", b.modelID, err)
	}
	if out.StopReason == types.StopReasonMaxTokens {
		return brief.Brief{}, fmt.Errorf("%w: reply was cut off at %d tokens", brief.ErrModelOutput, b.maxTokens)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return brief.Brief{}, fmt.Errorf("%w: converse returned no message", brief.ErrModelOutput)
	}
	var text strings.Builder
	for _, c := range msg.Value.Content {
		if t, ok := c.(*types.ContentBlockMemberText); ok {
			text.WriteString(t.Value)
		}
	}
	return p.Assemble(text.String())
}
