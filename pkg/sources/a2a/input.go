package a2a

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// KindInput is the PendingRequest kind of an agent's task that asks the
// caller for something (A2A input-required or auth-required).
const KindInput = "input"

// An agent's task that stops in input-required (or auth-required) waits on
// the agent, not here: the call returns OUTCOME_PENDING with the agent's
// message as the prompt, and a later call carrying the answer sends it as
// the task's next message and follows the task from there. So a waiting
// task costs no goroutine and no connection; the pending store's timer is
// all that runs, and on expiry it cancels the task on the agent.

// inputWait is one task waiting for the caller's answer.
type inputWait struct {
	src       *Source
	c         *client
	taskID    string
	contextID string
	// entry is set once the request is open; guarded by the source's mu.
	entry *pending.Entry
}

// suspend opens the pending request for a task that asks for input and
// returns it to the caller. When the caller may hold no more requests
// (limits.maxPending) the task is canceled on the agent and the call fails
// saying why.
func (s *Source) suspend(ctx context.Context, c *client, r *call, tc tool.Call, t *task) tool.Result {
	w := &inputWait{src: s, c: c, taskID: r.taskID, contextID: t.ContextID}
	e, err := s.open(tc, w)
	if err != nil {
		r.cancelTask(ctx, c)
		return tool.Failure(r.label()+" "+string(r.state)+": "+err.Error(), r.metadata())
	}
	prompt := c.clean(t.Status.Message.text())
	if prompt == "" {
		prompt = r.label() + " is " + string(r.state) + "; the agent did not say what it needs"
	}
	data := map[string]any{"state": string(r.state), "taskId": r.taskID}
	if w.contextID != "" {
		data["contextId"] = w.contextID
	}
	res := tool.Suspend(tool.Pending{ID: e.ID, Kind: KindInput, Prompt: prompt, Data: data, ExpiresAt: e.ExpiresAt})
	res.Metadata = r.metadata()
	return res
}

// open registers w with the source (so Close can withdraw it) and opens
// its pending request; on expiry the task is canceled on the agent.
func (s *Source) open(tc tool.Call, w *inputWait) (*pending.Entry, error) {
	s.mu.Lock()
	s.waits[w] = struct{}{}
	s.mu.Unlock()
	e, err := s.pending.Open(tc, KindInput, w, func() { s.expire(w) })
	s.mu.Lock()
	if err != nil {
		delete(s.waits, w)
	} else {
		w.entry = e
	}
	s.mu.Unlock()
	return e, err
}

// Resume takes the caller's answer to the task's request for input
// (pending.Resumer) and sends it to the agent as the task's next message,
// following the task from there; a declined request cancels the task. An
// answer the agent could not take (data that is neither text nor parts)
// is refused with the request left open, so the caller can correct it.
func (w *inputWait) Resume(ctx context.Context, e *pending.Entry, tc tool.Call) tool.Result {
	s := w.src
	fail := func(msg string) tool.Result { return tool.Failure(tc.Name+": "+msg, map[string]any{"agent": s.id}) }
	if !s.holds(w) {
		return fail(pending.ErrUnknown.Error())
	}
	if !s.enter() { // an answer forwarded here reaches the wait without Execute
		return tool.FailureWith(tool.OutcomeCanceled, fmt.Sprintf("A2A agent %s is shut down; retry the call", s.id))
	}
	defer s.calls.Done()
	var next outgoing
	if tc.Answer.OK {
		parts, err := answerParts(tc.Answer.Data)
		if err != nil {
			return fail(err.Error())
		}
		next = outgoing{Parts: parts, TaskID: w.taskID, ContextID: w.contextID}
	}
	if err := e.Deliver(*tc.Answer); err != nil {
		return fail(err.Error())
	}
	s.mu.Lock()
	delete(s.waits, w)
	s.mu.Unlock()
	if !tc.Answer.OK {
		return s.declined(ctx, w.c, w)
	}
	return s.run(ctx, w.c, tc, next)
}

func (s *Source) holds(w *inputWait) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.waits[w]
	return ok
}

// declined cancels a task whose request for input the caller declined: A2A
// has no "no answer" message, and a task left in input-required would
// wait on the agent for ever.
func (s *Source) declined(parent context.Context, c *client, w *inputWait) tool.Result {
	r := &call{src: s, start: time.Now(), taskID: w.taskID, state: "input-required"}
	out := r.label() + ": the caller declined the agent's request for input; "
	if r.cancelTask(parent, c) {
		r.state = "canceled"
		out += "the task was canceled on the agent"
	} else {
		out += "canceling the task on the agent failed, so it may still wait there"
	}
	return tool.Failure(out, r.metadata())
}

// expire cancels a task nobody answered in time (limits.pendingTimeout).
// It runs on the pending store's timer; Close waits for it.
func (s *Source) expire(w *inputWait) {
	s.mu.Lock()
	_, mine := s.waits[w]
	delete(s.waits, w)
	s.mu.Unlock()
	if !mine || !s.enter() {
		return
	}
	defer s.calls.Done()
	r := &call{src: s, taskID: w.taskID, state: "input-required"}
	r.cancelTask(context.Background(), w.c)
}

// withdrawWaits ends the requests of tasks still waiting when the source
// closes, and cancels those tasks on the agent: no answer can reach them
// through this source any more.
func (s *Source) withdrawWaits() {
	s.mu.Lock()
	waits := s.waits
	s.waits = map[*inputWait]struct{}{}
	s.mu.Unlock()
	if len(waits) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelWait)
	defer cancel()
	for w := range waits {
		if w.entry != nil && w.entry.Withdraw() {
			r := &call{src: s, taskID: w.taskID, state: "input-required"}
			r.cancelTask(ctx, w.c)
		}
	}
}

// answerParts reads an answer's data as the parts of the message to the
// agent: a string is one text part; a list holds parts, each a string, a
// {"text": ...} or a {"data": ...} object; one such object alone is one part.
func answerParts(data any) ([]outPart, error) {
	if list, ok := data.([]any); ok {
		parts := make([]outPart, 0, len(list))
		for _, item := range list {
			p, err := answerPart(item)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			return parts, nil
		}
	} else if p, err := answerPart(data); err == nil {
		return []outPart{p}, nil
	}
	return nil, errAnswerShape
}

var errAnswerShape = errors.New(`the answer's data must be the text to send the agent, or a list of parts, each a string, {"text": "..."} or {"data": {...}}`)

func answerPart(v any) (outPart, error) {
	switch v := v.(type) {
	case string:
		return outPart{Text: &v}, nil
	case map[string]any:
		if text, ok := v["text"].(string); ok {
			return outPart{Text: &text}, nil
		}
		if d, ok := v["data"]; ok && d != nil {
			return outPart{Data: d}, nil
		}
	}
	return outPart{}, errAnswerShape
}
