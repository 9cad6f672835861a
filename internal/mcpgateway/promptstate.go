package mcpgateway

//lint:file-ignore SA1019 sampling and roots are deprecated in the 2026-07-28 protocol but still what MCP servers ask for; they are relayed as themselves.

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/feature"
)

// A prompts/get an upstream on 2026-07-28 answers with input_required
// keeps no suspended entry (a prompt is a read: nothing runs until the
// answers are in), so its requestState carries the round itself: the
// upstream's input requests and its own requestState, with the claims a
// tool call's state has (the prompt and the canonical digest of its
// arguments in place of tool and arguments; principal, session, expiry),
// sealed with AES-256-GCM under a key derived from the requestState key.
// The client can neither read the upstream's state (it may hold what the
// upstream keeps from the client) nor change a byte of it, and a state is
// useless to any other caller, session, prompt or arguments.
//
//	"p." base64url(nonce || AES-GCM(key', JSON claims))

// promptStateTTL is how long a prompt's round may be answered.
const promptStateTTL = 10 * time.Minute

// promptClaims are what a prompt's requestState seals.
type promptClaims struct {
	stateClaims
	Requests json.RawMessage `json:"q"`            // the upstream's inputRequests
	State    string          `json:"us,omitempty"` // the upstream's requestState
}

const promptStatePrefix = "p."

// aead is the cipher prompt states are sealed with: AES-256-GCM under
// HMAC-SHA256(key, its purpose), so it shares no key with the MAC.
func (s *stateSigner) aead() cipher.AEAD {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("toolnexus prompts/get requestState"))
	block, _ := aes.NewCipher(m.Sum(nil)) // a 32-byte key: never fails
	gcm, _ := cipher.NewGCM(block)        // never fails for AES
	return gcm
}

// seal is the requestState for a prompt's round.
func (s *stateSigner) seal(c promptClaims) string {
	payload, _ := json.Marshal(c) // strings, an int and JSON: never fails
	gcm := s.aead()
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce) // never fails (crypto/rand)
	return promptStatePrefix + base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, payload, nil))
}

// unseal opens a prompt's requestState issued by this key for exactly
// want (its Tool, Args, Principal and Session).
func (s *stateSigner) unseal(state string, want stateClaims, now time.Time) (promptClaims, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, promptStatePrefix))
	gcm := s.aead()
	if !strings.HasPrefix(state, promptStatePrefix) || err != nil || len(raw) < gcm.NonceSize() {
		return promptClaims{}, errStateMalformed
	}
	payload, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], nil)
	if err != nil {
		return promptClaims{}, errStateForged
	}
	var c promptClaims
	if json.Unmarshal(payload, &c) != nil {
		return promptClaims{}, errStateMalformed
	}
	if err := c.admits(want, now); err != nil {
		return promptClaims{}, err
	}
	return c, nil
}

// promptBindings are the claims a prompt's requestState is bound to.
func promptBindings(fc core.FeatureCall, name string, args map[string]string) stateClaims {
	who := ""
	if fc.Caller != nil {
		who = fc.Caller.Name
	}
	a, _ := json.Marshal(args) // strings: never fails
	b, _ := suspend.Bind(who, fc.Session, "prompts/get "+name, a)
	return stateClaims{Tool: b.Tool, Args: b.Digest, Principal: b.Principal, Session: b.Session}
}

// promptInput is, for a 2026-07-28 client, ctx saying the door takes a
// prompt's round (and, on a retry, carrying the round it answers, once
// its requestState passed every check); a refusal is -32602.
func (g *Gateway) promptInput(ctx context.Context, req *mcp.GetPromptRequest, fc core.FeatureCall) (context.Context, error) {
	if !multiRoundTrip(req.Session) {
		return ctx, nil
	}
	in := &feature.PromptInput{}
	if st := req.Params.RequestState; st != "" {
		c, err := g.states.unseal(st, promptBindings(fc, req.Params.Name, req.Params.Arguments), time.Now())
		if err != nil {
			return ctx, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		resps, _ := json.Marshal(req.Params.InputResponses) // decoded from JSON: never fails
		in = &feature.PromptInput{Requests: c.Requests, State: c.State, Responses: resps}
	}
	return feature.WithPromptInput(ctx, in), nil
}

// promptInputRequired is the input_required answer to a prompts/get the
// upstream asked input for: its round whole, under its keys, with the
// sealed requestState; -32021 when the client did not declare a kind the
// round asks for.
func (g *Gateway) promptInputRequired(req *mcp.GetPromptRequest, fc core.FeatureCall, in *feature.PromptInput) (*mcp.GetPromptResult, error) {
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(in.Requests, &reqs); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("prompt %s: the MCP server's input requests cannot be passed on", req.Params.Name)}
	}
	for _, ir := range reqs {
		kind := kindElicitation
		switch ir.(type) {
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			kind = kindSampling
		case *mcp.ListRootsParams:
			kind = kindRoots
		}
		if !clientCan(req.Session, kind) {
			data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{kind: map[string]any{}}})
			return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: data,
				Message: fmt.Sprintf("the prompt needs the client's %s capability: declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"] to be asked", kind)}
		}
	}
	c := promptClaims{stateClaims: promptBindings(fc, req.Params.Name, req.Params.Arguments), Requests: in.Requests, State: in.State}
	c.Expires = time.Now().Add(promptStateTTL).Unix()
	return &mcp.GetPromptResult{InputRequests: reqs, RequestState: g.states.seal(c)}, nil
}
