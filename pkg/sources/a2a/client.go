package a2a

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

// Why a hand-rolled client rather than github.com/a2aproject/a2a-go:
// v0.3.3, the release on the Go module proxy, speaks only protocol 0.3
// (methods "message/send", "tasks/get", kind-tagged parts). It has no 1.0
// JSON-RPC dialect: no "SendMessage"/"GetTask"/"CancelTask" method names,
// no ROLE_*/TASK_STATE_* enum names, no "returnImmediately" and no
// "A2A-Version: 1.0" header. The tests pin both wire shapes byte for
// byte, and we need exactly three calls (send, get, cancel), so one small
// client that speaks both dialects is less code and less risk than the
// library for one dialect plus a hand-rolled one for the other.

// client speaks JSON-RPC 2.0 over HTTP to one agent.
type client struct {
	http *http.Client
	// callHTTP makes the calls (http with a token exchange when the agent has
	// one; the card fetch has no caller, so it uses http).
	callHTTP *http.Client
	header   http.Header // Content-Type, Accept, A2A-Version, the expanded config headers
	ep       endpoint
	nextID   atomic.Int64
	// maxBody bounds one response; a task carries its history and
	// artifacts, so allow a good margin over the output cap.
	maxBody int64
	redact  sources.Redactor // blanks expanded secrets out of results and errors
	// streaming is set when the agent card says capabilities.streaming:
	// calls that stream use message/stream (SendStreamingMessage in 1.0).
	streaming bool
}

// rpcError is a JSON-RPC error object returned by the agent.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("JSON-RPC error %d", e.Code)
	}
	return e.Message
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// call sends one JSON-RPC request and returns the raw result. A JSON-RPC
// error comes back as *rpcError; anything else is a transport problem.
func (c *client) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.nextID.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ep.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	resp, err := c.callHTTP.Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	defer resp.Body.Close()
	data, err := readLimited(resp.Body, c.maxBody)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %v", method, err)
	}
	// Some servers put a JSON-RPC error behind a 4xx/5xx status: prefer
	// the error object when there is one, it says more than the status.
	var r rpcResponse
	jsonErr := json.Unmarshal(data, &r)
	if jsonErr == nil && r.Error != nil {
		return nil, r.Error
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s: HTTP %d from the agent", method, resp.StatusCode)
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("%s: the agent's response is not JSON-RPC: %v", method, jsonErr)
	}
	if len(r.Result) == 0 || bytes.Equal(r.Result, []byte("null")) {
		return nil, fmt.Errorf("%s: the agent's response has neither result nor error", method)
	}
	return r.Result, nil
}

// The three calls, in each dialect.

// outPart is one part of a message we send: text, or structured data (an
// answer to input-required may carry either).
type outPart struct {
	Text *string
	Data any
}

// outgoing is a message we send: a new task's text, or the answer to a
// task that asked for input (then TaskID and ContextID name that task).
type outgoing struct {
	// Text is a new task's text, the message's one part when Parts is nil.
	Text      string
	Parts     []outPart
	TaskID    string
	ContextID string
}

func textMessage(text string) outgoing { return outgoing{Text: text} }

type part10 struct {
	Text *string `json:"text,omitempty"`
	Data any     `json:"data,omitempty"`
}

type message10 struct {
	Role      string   `json:"role"`
	MessageID string   `json:"messageId"`
	TaskID    string   `json:"taskId,omitempty"`
	ContextID string   `json:"contextId,omitempty"`
	Parts     []part10 `json:"parts"`
}

type sendParams10 struct {
	Message       message10 `json:"message"`
	Configuration struct {
		ReturnImmediately bool `json:"returnImmediately"`
	} `json:"configuration"`
}

type part03 struct {
	Kind string  `json:"kind"`
	Text *string `json:"text,omitempty"`
	Data any     `json:"data,omitempty"`
}

type message03 struct {
	Kind      string   `json:"kind"`
	Role      string   `json:"role"`
	MessageID string   `json:"messageId"`
	TaskID    string   `json:"taskId,omitempty"`
	ContextID string   `json:"contextId,omitempty"`
	Parts     []part03 `json:"parts"`
}

type sendParams03 struct {
	Message       message03 `json:"message"`
	Configuration struct {
		Blocking bool `json:"blocking"`
	} `json:"configuration"`
}

type idParams struct {
	ID string `json:"id"`
}

// wire10 and wire03 spell the message in each dialect.
func (m outgoing) wire10() message10 {
	var parts []part10
	if m.Parts == nil {
		// A new task: one allocation holds the part and its text, as
		// many as before answers could carry parts.
		h := &struct {
			p [1]part10
			s string
		}{s: m.Text}
		h.p[0].Text = &h.s
		parts = h.p[:]
	} else {
		parts = make([]part10, len(m.Parts))
		for i, p := range m.Parts {
			parts[i] = part10(p)
		}
	}
	return message10{Role: "ROLE_USER", MessageID: newUUID(), TaskID: m.TaskID, ContextID: m.ContextID, Parts: parts}
}

func (m outgoing) wire03() message03 {
	var parts []part03
	if m.Parts == nil {
		h := &struct {
			p [1]part03
			s string
		}{s: m.Text}
		h.p[0] = part03{Kind: "text", Text: &h.s}
		parts = h.p[:]
	} else {
		parts = make([]part03, len(m.Parts))
		for i, p := range m.Parts {
			parts[i] = part03{Kind: "text", Text: p.Text, Data: p.Data}
			if p.Text == nil {
				parts[i].Kind = "data"
			}
		}
	}
	return message03{Kind: "message", Role: "user", MessageID: newUUID(), TaskID: m.TaskID, ContextID: m.ContextID, Parts: parts}
}

// send submits the message without blocking and returns what the agent
// answered: normally a task, possibly a direct message.
func (c *client) send(ctx context.Context, m outgoing) (*task, error) {
	var (
		method string
		params any
	)
	if c.ep.proto == proto10 {
		p := sendParams10{Message: m.wire10()}
		p.Configuration.ReturnImmediately = true
		method, params = "SendMessage", p
	} else {
		p := sendParams03{Message: m.wire03()}
		p.Configuration.Blocking = false
		method, params = "message/send", p
	}
	raw, err := c.call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return decodeSendResult(c.ep.proto, raw)
}

func (c *client) get(ctx context.Context, id string) (*task, error) {
	method := "tasks/get"
	if c.ep.proto == proto10 {
		method = "GetTask"
	}
	raw, err := c.call(ctx, method, idParams{ID: id})
	if err != nil {
		return nil, err
	}
	return decodeTask(method, raw)
}

func (c *client) cancel(ctx context.Context, id string) error {
	method := "tasks/cancel"
	if c.ep.proto == proto10 {
		method = "CancelTask"
	}
	_, err := c.call(ctx, method, idParams{ID: id})
	return err
}

// clean removes every expanded secret from s before it reaches a result,
// an error or the log.
func (c *client) clean(s string) string { return c.redact.Apply(s) }

// newUUID is a random (version 4) UUID for messageId.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexdigits = "0123456789abcdef"
	out := make([]byte, 36)
	j := 0
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexdigits[x>>4], hexdigits[x&0x0f]
		j += 2
	}
	return string(out)
}

// readLimited reads at most limit bytes and fails beyond that, so a
// misbehaving agent cannot exhaust memory.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("response is larger than %d bytes", limit)
	}
	return data, nil
}

// unwrapURLError rewrites net/http's `Post "URL": cause` as `POST URL:
// cause`, which reads better in a tool result.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", strings.ToUpper(ue.Op), ue.URL, ue.Err)
	}
	return err
}
