package a2a

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// streamEvent is one event of a streamed task, in either dialect: 0.3
// tells the kinds apart by "kind", 1.0 wraps each in a named field.
type streamEvent struct {
	Kind   string          `json:"kind"`
	TaskID string          `json:"taskId"`
	Status *taskStatus     `json:"status"`
	Final  bool            `json:"final"`
	Art    json.RawMessage `json:"artifact"`

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
func (c *client) stream(ctx context.Context, text string, observe func(*task), progress func(string)) (*task, error) {
	method := "message/stream"
	var params any
	if c.ep.proto == proto10 {
		method = "SendStreamingMessage"
		params = sendParams10{Message: message10{Role: "ROLE_USER", MessageID: newUUID(), Parts: []textPart10{{Text: text}}}}
	} else {
		params = sendParams03{Message: message03{Kind: "message", Role: "user", MessageID: newUUID(), Parts: []textPart03{{Kind: "text", Text: text}}}}
	}
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.nextID.Add(1), Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.ep.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.callHTTP.Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An error (or an agent that answers in one piece): read it as
		// a plain JSON-RPC response.
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

	var cur *task
	apply := func(data []byte) (done bool, err error) {
		var r rpcResponse
		if err := json.Unmarshal(data, &r); err != nil {
			return false, fmt.Errorf("%s: an event is not JSON-RPC: %v", method, err)
		}
		if r.Error != nil {
			return false, r.Error
		}
		var ev streamEvent
		if err := json.Unmarshal(r.Result, &ev); err != nil {
			return false, fmt.Errorf("%s: an event is malformed: %v", method, err)
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
		case ev.Message != nil && c.ep.proto == proto10:
			cur = &task{ID: ev.Message.TaskID, Status: taskStatus{State: "completed"}, direct: ev.Message}
			return true, nil
		}
		switch ev.Kind {
		case "task":
			t, err := decodeTask(method, r.Result)
			if err != nil {
				return false, err
			}
			cur = t
		case "message":
			var m message
			if err := json.Unmarshal(r.Result, &m); err != nil {
				return false, fmt.Errorf("%s: the agent's message is malformed: %v", method, err)
			}
			cur = &task{ID: m.TaskID, Status: taskStatus{State: "completed"}, direct: &m}
			return true, nil
		case "status-update":
			if cur == nil {
				cur = &task{ID: ev.TaskID}
			}
			if ev.Status != nil {
				cur.Status = *ev.Status
				msg := c.clean(ev.Status.Message.text())
				if msg == "" {
					msg = string(ev.Status.State)
				}
				progress(msg)
			}
		case "artifact-update":
			if cur == nil {
				cur = &task{ID: ev.TaskID}
			}
			var a struct {
				Parts []part `json:"parts"`
			}
			if len(ev.Art) > 0 && json.Unmarshal(ev.Art, &a) == nil {
				cur.Artifacts = append(cur.Artifacts, a)
			}
		default:
			return false, nil // an event kind from a later version: skip it
		}
		if cur.ID == "" {
			cur.ID = ev.TaskID
		}
		observe(cur)
		return ev.Final || cur.Status.State.terminal() || cur.Status.State.interrupted(), nil
	}

	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), int(c.maxBody))
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			done, err := apply(data)
			data = data[:0]
			if err != nil || done {
				return cur, err
			}
		case strings.HasPrefix(line, "data:"):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		if cur != nil && cur.ID != "" {
			return cur, nil // the stream broke: poll the task from here
		}
		return nil, fmt.Errorf("%s: reading the event stream: %v", method, err)
	}
	if cur == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: the event stream ended without a task", method)
	}
	return cur, nil
}
