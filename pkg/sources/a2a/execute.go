package a2a

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The causes that end a call's context, told apart to pick the result.
var (
	errTimedOut     = errors.New("a2a: agent timeout")
	errSourceClosed = errors.New("a2a: source closed")
)

// maxPollErrors is how many transport failures in a row a poll loop
// rides out before it gives up: one dropped connection should not throw
// away a task that runs for minutes.
const maxPollErrors = 3

// call is one execution's progress, rendered into the result metadata.
type call struct {
	src    *Source
	start  time.Time
	taskID string
	state  state
	polls  int
}

// execute submits the task without blocking and polls until the task ends,
// the timeout passes, or the caller gives up; the last two cancel the task
// on the agent. A call that streams, to an agent whose card says it
// streams, follows the task's events instead of polling. A task that asks
// for input suspends the call (input.go); a call with an answer sends it
// as the task's next message and goes on from there.
func (s *Source) execute(parent context.Context, c *client, tc tool.Call) tool.Result {
	var args struct {
		Task *string `json:"task"`
	}
	if err := tc.Decode(&args); err != nil || args.Task == nil || strings.TrimSpace(*args.Task) == "" {
		return tool.FailureWith(tool.OutcomeInvalidArguments,
			`invalid arguments: "task" must be a non-empty string saying what the agent should do`)
	}
	if !s.enter() {
		return tool.FailureWith(tool.OutcomeCanceled, fmt.Sprintf("A2A agent %s is shut down; retry the call", s.id))
	}
	defer s.calls.Done()

	if tc.Answer != nil {
		// The task's wait resumes it (inputWait.Resume), here or, forwarded,
		// on the replica holding the wait.
		return s.pending.Answer(parent, tc, pending.Answering{Label: tc.Name, Meta: map[string]any{"agent": s.id}})
	}
	return s.run(parent, c, tc, textMessage(*args.Task))
}

// run sends m and follows the task it starts or continues.
func (s *Source) run(parent context.Context, c *client, tc tool.Call, m outgoing) tool.Result {
	r := &call{src: s, start: time.Now(), state: "unknown", taskID: m.TaskID}
	ctx, cancelCause := context.WithCancelCause(parent)
	defer cancelCause(nil)
	defer context.AfterFunc(s.base, func() { cancelCause(errSourceClosed) })()
	ctx, cancel := context.WithTimeoutCause(ctx, time.Duration(s.cfg.Timeout)*time.Millisecond, errTimedOut)
	defer cancel()

	var t *task
	var err error
	if c.streaming && tool.Streaming(ctx) {
		// Status updates arrive as they happen: each becomes a progress
		// event; the task id is known from the first, for a cancel.
		n := 0
		t, err = c.stream(ctx, m, r.observe, func(msg string) {
			n++
			tool.Progress(ctx, float64(n), 0, msg)
		})
	} else {
		t, err = c.send(ctx, m)
	}
	if err != nil {
		if ctx.Err() != nil {
			return r.stopped(ctx, c)
		}
		return r.failed(c, err)
	}
	r.observe(t)
	t, res := r.poll(ctx, c, t)
	if res != nil {
		return *res
	}
	if t.Status.State.interrupted() && r.taskID != "" {
		return s.suspend(ctx, c, r, tc, t)
	}
	return r.finish(c, t)
}

// poll asks for the task every pollEvery until it is terminal or
// interrupted; res is set when the call ends first (stopped, failed).
func (r *call) poll(ctx context.Context, c *client, t *task) (last *task, res *tool.Result) {
	// One timer for the whole loop, made only when there is something to
	// poll: a task that is terminal on submit costs no timer at all.
	pollEvery := time.Duration(r.src.cfg.PollEvery) * time.Millisecond
	var timer *time.Timer
	errorsInRow := 0
	for !t.Status.State.terminal() && !t.Status.State.interrupted() {
		if timer == nil {
			timer = time.NewTimer(pollEvery)
			defer timer.Stop()
		} else {
			timer.Reset(pollEvery)
		}
		select {
		case <-ctx.Done():
			return nil, ptr(r.stopped(ctx, c))
		case <-timer.C:
		}
		next, err := c.get(ctx, r.taskID)
		r.polls++
		switch {
		case err == nil:
			t, errorsInRow = next, 0
			r.observe(t)
		case ctx.Err() != nil:
			return nil, ptr(r.stopped(ctx, c))
		default:
			var rpcErr *rpcError
			errorsInRow++
			if errors.As(err, &rpcErr) || errorsInRow >= maxPollErrors {
				return nil, ptr(r.failed(c, err))
			}
			r.src.env.Log().Debug("a2a poll failed; retrying", "agent", r.src.id, "task", r.taskID, "error", c.clean(err.Error()))
		}
	}
	return t, nil
}

func ptr(r tool.Result) *tool.Result { return &r }

func (r *call) observe(t *task) {
	if t.ID != "" {
		r.taskID = t.ID
	}
	r.state = t.Status.State
}

func (r *call) metadata() map[string]any {
	return map[string]any{
		"agent":  r.src.id,
		"taskId": r.taskID,
		"state":  string(r.state),
		"polls":  r.polls,
		"ms":     time.Since(r.start).Milliseconds(),
	}
}

// label names the task in outputs; before the agent has answered the
// submit there is no id to name.
func (r *call) label() string {
	if r.taskID == "" {
		return "A2A task (no id yet)"
	}
	return "A2A task " + r.taskID
}

// finish renders a task that reached a terminal or interrupted state.
// An agent that echoes a configured secret does not carry it further.
func (r *call) finish(c *client, t *task) tool.Result {
	meta := r.metadata()
	if t.Status.State == "completed" {
		out := c.clean(t.output())
		if limit := r.src.env.OutputCap(); len(out) > limit {
			out = truncateUTF8(out, limit)
			meta["truncated"] = true
		}
		return tool.Success(out, meta)
	}
	out := r.label() + " " + string(t.Status.State)
	if m := t.Status.Message.text(); m != "" {
		out += ": " + c.clean(m)
	}
	return tool.Failure(out, meta)
}

// failed turns a JSON-RPC error into a failure with its message, and a
// transport error into one that names the agent or task.
func (r *call) failed(c *client, err error) tool.Result {
	var rpcErr *rpcError
	if errors.As(err, &rpcErr) {
		return tool.Failure(c.clean(rpcErr.Error()), r.metadata())
	}
	where := "A2A agent " + r.src.id
	if r.taskID != "" {
		where = r.label()
	}
	return tool.Failure(c.clean(where+": "+err.Error()), r.metadata())
}

// stopped reports a call whose context ended, and cancels the task on the
// agent (when it has an id and is still running) on a short detached
// context, so the agent does not keep working for nobody.
func (r *call) stopped(ctx context.Context, c *client) tool.Result {
	cause := context.Cause(ctx)
	r.cancelTask(ctx, c)
	meta := r.metadata()
	switch {
	case errors.Is(cause, errTimedOut):
		return tool.Result{IsError: true, Outcome: tool.OutcomeTimeout, Metadata: meta,
			Output: fmt.Sprintf("%s timed out after %dms (state=%s)", r.label(), r.src.cfg.Timeout, r.state)}
	case errors.Is(cause, context.DeadlineExceeded):
		// The caller's own deadline came first: report how long we had.
		return tool.Result{IsError: true, Outcome: tool.OutcomeTimeout, Metadata: meta,
			Output: fmt.Sprintf("%s timed out after %dms (state=%s)", r.label(), meta["ms"], r.state)}
	default:
		return tool.Result{IsError: true, Outcome: tool.OutcomeCanceled, Metadata: meta,
			Output: r.label() + " canceled"}
	}
}

// cancelTask cancels the task on the agent when it has an id and is still
// running, on a short context detached from ctx (which may be done
// already); it reports whether the agent took the cancel.
func (r *call) cancelTask(ctx context.Context, c *client) bool {
	if r.taskID == "" || r.state.terminal() {
		return false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	if err := c.cancel(cctx, r.taskID); err != nil {
		r.src.env.Log().Warn("a2a cancel failed", "agent", r.src.id, "task", r.taskID, "error", c.clean(err.Error()))
		return false
	}
	return true
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
