package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// task is an A2A task in either dialect, reduced to what a tool result needs.
type task struct {
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    taskStatus `json:"status"`
	Artifacts []struct {
		Parts []part `json:"parts"`
	} `json:"artifacts"`
	History []message `json:"history"`

	// direct is set when the agent answered the submit with a message
	// instead of a task: the answer is final, there is nothing to poll.
	direct *message
}

type taskStatus struct {
	State   state    `json:"state"`
	Message *message `json:"message"`
}

type message struct {
	Role   role   `json:"role"`
	TaskID string `json:"taskId"`
	Parts  []part `json:"parts"`
}

// part is a 1.0 part ({"text": ...}, one of text/raw/url/data) or a 0.3
// part ({"kind": "text", "text": ...}). Only text parts are read.
type part struct {
	Kind string  `json:"kind"`
	Text *string `json:"text"`
}

// state is the short lowercase state name used in outputs and metadata:
// 1.0 "TASK_STATE_INPUT_REQUIRED" and 0.3 "input-required" both become
// "input-required".
type state string

// states10 are the 1.0 TaskState enum numbers, for a server that sends the
// enum as a number (proto JSON permits it).
var states10 = [...]state{"unspecified", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"}

func (s *state) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		n, nerr := strconv.Atoi(string(bytes.TrimSpace(b)))
		if nerr != nil || n < 0 || n >= len(states10) {
			return fmt.Errorf("task state %s is neither a state name nor a TaskState number", b)
		}
		*s = states10[n]
		return nil
	}
	*s = normState(name)
	return nil
}

func normState(name string) state {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "task_state_")
	n = strings.ReplaceAll(n, "_", "-")
	if n == "cancelled" {
		n = "canceled"
	}
	return state(n)
}

// terminal: the task will not change again.
func (s state) terminal() bool {
	switch s {
	case "completed", "failed", "canceled", "rejected":
		return true
	}
	return false
}

// interrupted: the agent waits for input or auth from the caller, so
// polling on would only burn the timeout; the call suspends instead.
func (s state) interrupted() bool {
	return s == "input-required" || s == "auth-required"
}

// role is "user" or "agent" in either dialect ("ROLE_AGENT" → "agent").
type role string

func (r *role) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		// A numeric 1.0 Role enum: 1 user, 2 agent.
		switch string(bytes.TrimSpace(b)) {
		case "1":
			*r = "user"
		case "2":
			*r = "agent"
		}
		return nil
	}
	*r = role(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "role_"))
	return nil
}

// decodeSendResult reads a submit answer: 1.0 wraps it as {"task": ...} or
// {"message": ...}; 0.3 returns the task or message itself, told apart by
// "kind".
func decodeSendResult(p protocol, raw json.RawMessage) (*task, error) {
	if p == proto10 {
		var r struct {
			Task    json.RawMessage `json:"task"`
			Message *message        `json:"message"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("SendMessage: the agent's result is not a task or message: %v", err)
		}
		switch {
		case len(r.Task) > 0 && !field.IsNull(r.Task):
			return decodeTask("SendMessage", r.Task)
		case r.Message != nil:
			return &task{ID: r.Message.TaskID, Status: taskStatus{State: "completed"}, direct: r.Message}, nil
		}
		return nil, fmt.Errorf("SendMessage: the agent's result holds neither a task nor a message")
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, fmt.Errorf("message/send: the agent's result is not a task or message: %v", err)
	}
	if kind.Kind == "message" {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("message/send: the agent's message is malformed: %v", err)
		}
		return &task{ID: m.TaskID, Status: taskStatus{State: "completed"}, direct: &m}, nil
	}
	return decodeTask("message/send", raw)
}

func decodeTask(method string, raw json.RawMessage) (*task, error) {
	var t task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%s: the agent's task is malformed: %v", method, err)
	}
	if t.ID == "" {
		return nil, fmt.Errorf("%s: the agent's task has no id", method)
	}
	if t.Status.State == "" {
		return nil, fmt.Errorf("%s: task %s has no status.state", method, t.ID)
	}
	return &t, nil
}

// text joins the message's text parts with "\n".
func (m *message) text() string {
	if m == nil {
		return ""
	}
	return strings.Join(appendText(nil, m.Parts), "\n")
}

// appendText appends the text of every text part.
func appendText(texts []string, parts []part) []string {
	for _, p := range parts {
		if p.Text != nil && (p.Kind == "" || p.Kind == "text") {
			texts = append(texts, *p.Text)
		}
	}
	return texts
}

// output is a completed task's answer: the text parts of all artifacts
// joined by "\n"; without any, the last agent message's text (the status
// message first, it is the newest, then history from the end).
func (t *task) output() string {
	if t.direct != nil {
		return t.direct.text()
	}
	var texts []string
	for _, a := range t.Artifacts {
		texts = appendText(texts, a.Parts)
	}
	if len(texts) > 0 {
		return strings.Join(texts, "\n")
	}
	if m := t.Status.Message; m != nil && m.Role != "user" {
		if s := m.text(); s != "" {
			return s
		}
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := &t.History[i]; m.Role == "agent" {
			if s := m.text(); s != "" {
				return s
			}
		}
	}
	return ""
}
