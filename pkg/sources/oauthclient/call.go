package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// authorizationData is what an authorization request keeps in the
// suspended-call store (never a secret: the URL is the caller's to open).
type authorizationData struct {
	Upstream string `json:"upstream"`
	Flow     string `json:"flow"`
	URL      string `json:"url"`
}

// IsAuthorization reports whether an answer's id is an authorization
// request's: ForCall takes it; every other answer is the source's own.
func IsAuthorization(id string) bool { return suspend.KindOf(id) == KindAuthorization }

// ForCall is what a source runs at the start of a call to the upstream:
// the caller's access token, or the result the call returns instead. A
// caller without a connection (or whose refresh was refused) gets a
// PENDING of kind "authorization" with the login URL; its retry with
// answer {id, ok: true} waits for the login to complete (up to the call's
// own deadline) and then runs with the caller's fresh token. A caller
// never gets another caller's token: everything is keyed by its
// principal, and the request is bound to the call like any PENDING.
func (u *Upstream) ForCall(ctx context.Context, call tool.Call, l pending.Limits) (string, *tool.Result) {
	if a := call.Answer; a != nil && IsAuthorization(a.ID) {
		return u.resume(ctx, call, l)
	}
	tok, err := u.Token(ctx, call.Owner.Principal)
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, ErrNotConnected) {
		return "", u.failure(err.Error())
	}
	why := ""
	if e := (*Error)(nil); errors.As(err, &e) && e.Reason != "not connected" {
		why = e.Reason
	}
	return "", u.suspend(ctx, call, l, why)
}

func (u *Upstream) failure(text string) *tool.Result {
	r := tool.Failure(text, map[string]any{"upstream": u.name})
	return &r
}

// suspend starts a login for the caller and returns the PENDING result
// that carries its URL. why, when set, says why an earlier connection or
// login is gone.
func (u *Upstream) suspend(ctx context.Context, call tool.Call, l pending.Limits, why string) *tool.Result {
	f, err := u.startFlow(ctx, call.Owner.Principal, false)
	if err != nil {
		return u.failure(fmt.Sprintf("%s: cannot start the login to connect your account: %v", u.what, err))
	}
	b, err := pending.Binding(call)
	if err != nil {
		return u.failure(err.Error())
	}
	ttl := min(l.Timeout, u.m.opts.FlowTTL)
	if ttl <= 0 {
		ttl = u.m.opts.FlowTTL
	}
	data, _ := json.Marshal(authorizationData{Upstream: u.name, Flow: f.ID, URL: f.URL})
	e, err := u.m.opts.Suspended.Create(ctx, suspend.Request{Kind: KindAuthorization, Binding: b, TTL: ttl,
		MaxPerPrincipal: l.MaxPerPrincipal, Reuse: true, Data: data})
	if errors.Is(err, suspend.ErrCapped) {
		return u.failure(pending.ErrTooMany.Error())
	}
	if err != nil {
		return u.failure(fmt.Sprintf("%s: %v", u.what, err))
	}
	var d authorizationData
	if e.Reused && json.Unmarshal(e.Data, &d) == nil {
		// The same call asked before and its login is still open: that
		// link stands; the one just made is never shown.
		_, _ = u.m.v.Delete(ctx, f.key)
		f.URL = d.URL
	}
	prompt := fmt.Sprintf("%s acts with your own account there, and you have not connected it yet", u.what)
	if why != "" {
		prompt = fmt.Sprintf("%s acts with your own account there, and your connection is gone: %s", u.what, why)
	}
	prompt += fmt.Sprintf(". Open %s and log in (within %s), then call this tool again with the same arguments and answer {id: %q, ok: true}.",
		f.URL, ttl.Round(time.Second), e.ID)
	r := tool.Suspend(tool.Pending{ID: e.ID, Kind: string(KindAuthorization), Prompt: prompt, URL: f.URL,
		Data: map[string]any{"upstream": u.name}, ExpiresAt: e.ExpiresAt})
	r.Metadata = map[string]any{"upstream": u.name}
	return &r
}

// resumeMargin is how long before its deadline a retry that still waits
// for the login gives up, so its answer (the same PENDING) gets back.
const resumeMargin = 500 * time.Millisecond

// resume takes the caller's answer to its authorization request: it must
// come from the call that was suspended (principal, session, tool,
// arguments); it waits for the login to end, then the call runs.
func (u *Upstream) resume(ctx context.Context, call tool.Call, l pending.Limits) (string, *tool.Result) {
	store := u.m.opts.Suspended
	id := call.Answer.ID
	e, err := store.Get(ctx, id)
	if err != nil || e.Kind != KindAuthorization || e.Principal != call.Owner.Principal || e.Session != call.Owner.Session {
		return "", u.failure(pending.ErrUnknown.Error())
	}
	var d authorizationData
	if json.Unmarshal(e.Data, &d) != nil || d.Upstream != u.name {
		return "", u.failure(pending.ErrUnknown.Error())
	}
	b, err := pending.Binding(call)
	if err != nil || b != e.Binding {
		return "", u.failure(pending.ErrMismatch.Error())
	}
	switch e.State {
	case suspend.Pending:
	case suspend.Expired:
		return "", u.failure(pending.ErrExpired.Error())
	default:
		return "", u.failure(pending.ErrUnknown.Error())
	}
	spend := func() {
		_, _ = store.Resolve(context.WithoutCancel(ctx), id, suspend.Resolution{To: suspend.Answered, By: e.Principal, Require: &b})
	}
	if !call.Answer.OK {
		spend()
		return "", u.failure(fmt.Sprintf("%s: you declined to connect your account, so the call did not run; call the tool again to be asked again", u.what))
	}
	deadline := e.ExpiresAt
	if dl, ok := ctx.Deadline(); ok && dl.Add(-resumeMargin).Before(deadline) {
		deadline = dl.Add(-resumeMargin)
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for {
		tok, err := u.Token(wctx, e.Principal)
		if err == nil {
			spend()
			return tok, nil
		}
		if !errors.Is(err, ErrNotConnected) {
			return "", u.failure(err.Error())
		}
		var done doneRecord
		if found, err := getJSON(wctx, u.m.v, doneKey(d.Flow), &done); err == nil && found && done.Error != "" {
			spend()
			return "", u.suspend(ctx, call, l, "the last login failed: "+done.Error)
		}
		if u.m.waitChange(wctx, time.Second, connKey(u.name, e.Principal), doneKey(d.Flow)) != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return "", u.failure(fmt.Sprintf("%s: the call ended before the login completed", u.what))
	}
	r := tool.Suspend(tool.Pending{ID: e.ID, Kind: string(KindAuthorization), URL: d.URL, Data: map[string]any{"upstream": u.name}, ExpiresAt: e.ExpiresAt,
		Prompt: fmt.Sprintf("%s: the login has not completed yet. Open %s and log in, then answer {id: %q, ok: true} again.", u.what, d.URL, e.ID)})
	r.Metadata = map[string]any{"upstream": u.name}
	return "", &r
}
