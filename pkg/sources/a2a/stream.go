package a2a

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// streamEvent is one event of a streamed task, in either dialect: 0.3
// tells the kinds apart by "kind", 1.0 wraps each in a named field.
type streamEvent struct {
	Kind      string          `json:"kind"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Status    *taskStatus     `json:"status"`
	Final     bool            `json:"final"`
	Art       json.RawMessage `json:"artifact"`

	// 1.0 wrappers.
	Task           json.RawMessage `json:"task"`
	Message        *message        `json:"message"`
	StatusUpdate   *streamEvent    `json:"statusUpdate"`
	ArtifactUpdate *streamEvent    `json:"artifactUpdate"`
}

// stream submits the task text with message/stream (0.3) or
// SendStreamingMessage (1.0) and follows the server-sent events: each
// status update goes to progress (its message text, else the state), the
// task as known so far to observe. It returns when the task reaches a
// terminal or interrupted state, or when the stream ends (the caller then
// polls, as for a task submitted without streaming).
func (c *client) stream(ctx context.Context, m outgoing, observe func(*task), progress func(string)) (*task, error) {
	method, resp, err := c.openStream(ctx, m)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An error (or an agent that answers in one piece): read it as
		// a plain JSON-RPC response.
		return c.plainResponse(method, resp)
	}
	st := &streamState{c: c, method: method, observe: observe, progress: progress}
	return st.follow(ctx, resp.Body)
}

// openStream sends the streaming request; method is its JSON-RPC method,
// for error texts.
func (c *client) openStream(ctx context.Context, m outgoing) (method string, resp *http.Response, err error) {
	method = "message/stream"
	var params any
	if c.ep.proto == proto10 {
		method = "SendStreamingMessage"
		params = sendParams10{Message: m.wire10()}
	} else {
		params = sendParams03{Message: m.wire03()}
	}
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.nextID.Add(1), Method: method, Params: params})
	if err != nil {
		return method, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ep.url, bytes.NewReader(body))
	if err != nil {
		return method, nil, err
	}
	req.Header = c.header.Clone()
	req.Header.Set("Accept", "text/event-stream")
	resp, err = c.callHTTP.Do(req)
	if err != nil {
		return method, nil, unwrapURLError(err)
	}
	return method, resp, nil
}

// plainResponse reads a streaming request's answer that is not an event
// stream: a JSON-RPC error, or the whole result at once.
func (c *client) plainResponse(method string, resp *http.Response) (*task, error) {
	data, err := readLimited(resp.Body, c.maxBody)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %v", method, err)
	}
	var r rpcResponse
	if json.Unmarshal(data, &r) == nil && r.Error != nil {
		return nil, r.Error
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s: HTTP %d from the agent", method, resp.StatusCode)
	}
	return decodeSendResult(c.ep.proto, r.Result)
}

// streamState is one event stream being followed: the task as known so far.
type streamState struct {
	c        *client
	method   string
	observe  func(*task)
	progress func(string)
	cur      *task
}

// follow reads server-sent events from body until the task is done or
// interrupted, or the stream ends.
func (st *streamState) follow(ctx context.Context, body io.Reader) (*task, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), int(st.c.maxBody))
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			done, err := st.apply(data)
			data = data[:0]
			if err != nil || done {
				return st.cur, err
			}
		case strings.HasPrefix(line, "data:"):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		if st.cur != nil && st.cur.ID != "" {
			return st.cur, nil // the stream broke: poll the task from here
		}
		return nil, fmt.Errorf("%s: reading the event stream: %v", st.method, err)
	}
	if st.cur == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: the event stream ended without a task", st.method)
	}
	return st.cur, nil
}

// apply takes one event's data; done is true once the task needs nothing
// more from the stream.
func (st *streamState) apply(data []byte) (done bool, err error) {
	ev, result, err := st.decode(data)
	if err != nil {
		return false, err
	}
	switch ev.Kind {
	case kindMessage10:
		st.cur = &task{ID: ev.Message.TaskID, Status: taskStatus{State: "completed"}, direct: ev.Message}
		return true, nil
	case "task":
		t, err := decodeTask(st.method, result)
		if err != nil {
			return false, err
		}
		st.cur = t
	case "message":
		var m message
		if err := json.Unmarshal(result, &m); err != nil {
			return false, fmt.Errorf("%s: the agent's message is malformed: %v", st.method, err)
		}
		st.cur = &task{ID: m.TaskID, Status: taskStatus{State: "completed"}, direct: &m}
		return true, nil
	case "status-update":
		st.statusUpdate(ev)
	case "artifact-update":
		st.artifactUpdate(ev)
	default:
		return false, nil // an event kind from a later version: skip it
	}
	if st.cur.ID == "" {
		st.cur.ID = ev.TaskID
	}
	if st.cur.ContextID == "" {
		st.cur.ContextID = ev.ContextID
	}
	st.observe(st.cur)
	return ev.Final || st.cur.Status.State.terminal() || st.cur.Status.State.interrupted(), nil
}

// decode unwraps one event of either dialect into a 0.3-style event with
// Kind set, and the raw result a task or message decodes from.
func (st *streamState) decode(data []byte) (*streamEvent, json.RawMessage, error) {
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: an event is not JSON-RPC: %v", st.method, err)
	}
	if r.Error != nil {
		return nil, nil, r.Error
	}
	var ev streamEvent
	if err := json.Unmarshal(r.Result, &ev); err != nil {
		return nil, nil, fmt.Errorf("%s: an event is malformed: %v", st.method, err)
	}
	switch {
	case ev.StatusUpdate != nil:
		ev = *ev.StatusUpdate
		ev.Kind = "status-update"
	case ev.ArtifactUpdate != nil:
		ev = *ev.ArtifactUpdate
		ev.Kind = "artifact-update"
	case len(ev.Task) > 0 && !field.IsNull(ev.Task):
		ev.Kind = "task"
		r.Result = ev.Task
	case ev.Message != nil && st.c.ep.proto == proto10:
		ev.Kind = kindMessage10
	}
	return &ev, r.Result, nil
}

// kindMessage10 marks a 1.0 event that is the agent's direct answer.
const kindMessage10 = "message (1.0)"

func (st *streamState) statusUpdate(ev *streamEvent) {
	if st.cur == nil {
		st.cur = &task{ID: ev.TaskID}
	}
	if ev.Status == nil {
		return
	}
	st.cur.Status = *ev.Status
	msg := st.c.clean(ev.Status.Message.text())
	if msg == "" {
		msg = string(ev.Status.State)
	}
	st.progress(msg)
}

func (st *streamState) artifactUpdate(ev *streamEvent) {
	if st.cur == nil {
		st.cur = &task{ID: ev.TaskID}
	}
	var a struct {
		Parts []part `json:"parts"`
	}
	if len(ev.Art) > 0 && json.Unmarshal(ev.Art, &a) == nil {
		st.cur.Artifacts = append(st.cur.Artifacts, a)
	}
}
