// Package bedrock is the Brief's Amazon Bedrock room: a brief.Builder that
// has a model behind Bedrock's Converse API write the Brief. The prompt, the
// parsing of the reply and the citation check are the Brief's own
// (brief.SystemPrompt, brief.NewPrompt, brief.Prompt.Assemble); this
// package holds the call, the builder's name and its identity.
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// Option configures a Builder.
type Option func(*Builder)

// WithMaxTokens sets the request's output-token limit (maxTokens); n <= 0
// keeps the model's default (DefaultMaxTokens).
func WithMaxTokens(n int) Option {
	return func(b *Builder) {
		if n > 0 {
			b.maxTokens = int32(min(n, 1<<30))
		}
	}
}

// New returns a Bedrock builder calling modelID through client. The
// request asks for at most DefaultMaxTokens(modelID) output tokens unless
// WithMaxTokens says otherwise.
func New(client *bedrockruntime.Client, modelID string, opts ...Option) *Builder {
	b := &Builder{client: client, modelID: modelID, maxTokens: DefaultMaxTokens(modelID)}
	for _, o := range opts {
		o(b)
	}
	return b
}

// MaxTokens is the output-token limit the builder's requests ask for.
func (b *Builder) MaxTokens() int32 { return b.maxTokens }

// outputLimits are the output-token limits of the models the builder knows,
// by foundation-model id prefix (Bedrock's model cards; a request over a
// model's limit fails validation before the model runs). The longest
// matching prefix wins.
var outputLimits = []struct {
	prefix string
	tokens int32
}{
	{"anthropic.claude-3-haiku", 4096},
	{"anthropic.claude-3-sonnet", 4096},
	{"anthropic.claude-3-opus", 4096},
	{"anthropic.claude-3-5-haiku", 8192},
	{"anthropic.claude-3-5-sonnet", 8192},
	{"anthropic.claude-3-7-sonnet", 8192},
	{"anthropic.claude-sonnet-4", 8192},
	{"anthropic.claude-opus-4", 8192},
	{"amazon.nova-micro", 5000},
	{"amazon.nova-lite", 5000},
	{"amazon.nova-pro", 5000},
	{"amazon.nova-premier", 8192},
	{"meta.llama3", 2048},
	{"mistral.mistral-large", 8192},
}

// FallbackMaxTokens is the limit asked of a model outputLimits does not
// know: the smallest of the models it does know that can write a Brief.
const FallbackMaxTokens = 4096

// DefaultMaxTokens is the output-token limit for modelID: its model's
// limit (an inference profile's region prefix, "eu." or "us.", is ignored),
// or FallbackMaxTokens.
func DefaultMaxTokens(modelID string) int32 {
	id := foundationModel(modelID)
	best, tokens := 0, int32(FallbackMaxTokens)
	for _, l := range outputLimits {
		if strings.HasPrefix(id, l.prefix) && len(l.prefix) > best {
			best, tokens = len(l.prefix), l.tokens
		}
	}
	return tokens
}

// foundationModel strips an inference profile's geography prefix
// ("eu.anthropic.claude-…" → "anthropic.claude-…") and an ARN's path.
func foundationModel(modelID string) string {
	id := modelID
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	for _, geo := range []string{"us-gov.", "global.", "apac.", "us.", "eu.", "ap.", "ca.", "jp.", "au."} {
		if strings.HasPrefix(id, geo) {
			return id[len(geo):]
		}
	}
	return id
}

// ErrReplyCutOff is wrapped by a CutOffError.
var ErrReplyCutOff = errors.New("bedrock: the model's reply was cut off at the output-token limit")

// CutOffError is a reply the model stopped at the request's output-token
// limit (stop reason max_tokens): its JSON is incomplete, so nothing of it
// is assembled. It is an ErrReplyCutOff and a brief.ErrModelOutput; the
// build fails and the rail retries it (a larger limit, WithMaxTokens or
// RAIL_BEDROCK_MAX_TOKENS, or fewer documents, avoids it).
type CutOffError struct {
	ModelID      string
	MaxTokens    int32 // the limit the request asked for
	OutputTokens int32 // what the model reports it wrote, 0 if it did not say
}

func (e *CutOffError) Error() string {
	return fmt.Sprintf("bedrock: %s's reply was cut off at the output-token limit (maxTokens %d, %d output tokens); nothing of it was used", e.ModelID, e.MaxTokens, e.OutputTokens)
}

// Unwrap makes a CutOffError match ErrReplyCutOff and brief.ErrModelOutput.
func (e *CutOffError) Unwrap() []error { return []error{ErrReplyCutOff, brief.ErrModelOutput} }

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
	}, readOnlyRequestBody)
	if err != nil {
		return brief.Brief{}, fmt.Errorf("bedrock: converse with %s: %w", b.modelID, err)
	}
	if out.StopReason == types.StopReasonMaxTokens {
		ce := &CutOffError{ModelID: b.modelID, MaxTokens: b.maxTokens}
		if out.Usage != nil && out.Usage.OutputTokens != nil {
			ce.OutputTokens = *out.Usage.OutputTokens
		}
		return brief.Brief{}, ce
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

// readOnlyRequestBody makes the call send its request body through Read
// only. The SDK closes the request body as soon as the response headers
// are in, while net/http's writer may still be making its last read of
// the body (the one that checks it held no more than Content-Length). The
// SDK's body answers that read with io.EOF once closed when it is read
// through WriteTo (as io.Copy prefers), and io.Copy hands WriteTo's io.EOF
// back as an error; the transport then takes the request as failed and
// closes the connection, under the reply still being read ("read tcp …:
// use of closed network connection"). Through Read, a closed body is a
// clean end of the body.
func readOnlyRequestBody(o *bedrockruntime.Options) {
	if o.HTTPClient != nil {
		o.HTTPClient = readOnlyBodyClient{o.HTTPClient}
	}
}

type readOnlyBodyClient struct{ next bedrockruntime.HTTPClient }

func (c readOnlyBodyClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readOnlyBody{r.Body}
	}
	return c.next.Do(r)
}

// readOnlyBody hides every method of the body but Read and Close.
type readOnlyBody struct{ rc io.ReadCloser }

func (b readOnlyBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b readOnlyBody) Close() error               { return b.rc.Close() }
