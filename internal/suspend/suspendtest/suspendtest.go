// Package suspendtest is the contract every suspend.Store implementation
// passes: run it from the implementation's own tests with a constructor
// that returns an empty store.
package suspendtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

// Run runs the contract against stores made by newStore (each subtest gets
// a fresh, empty store, using the real clock).
func Run(t *testing.T, newStore func(t *testing.T) suspend.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, suspend.Store)
	}{
		{"CreateAndGet", createAndGet},
		{"InvalidRequests", invalidRequests},
		{"ResolveOnce", resolveOnce},
		{"ConcurrentResolutionsOneWins", concurrentResolutions},
		{"AnswerBoundToTheCall", answerBound},
		{"ClaimOnce", claimOnce},
		{"ClaimBoundToTheCall", claimBound},
		{"ClaimDeniedOrPending", claimDeniedOrPending},
		{"Expiry", expiry},
		{"ApprovedButUnclaimedExpires", approvedExpires},
		{"ExpiredReadsUnknownToOthers", expiredUnknownToOthers},
		{"CapPerPrincipal", capPerPrincipal},
		{"CapTotal", capTotal},
		{"CapsCountOnlyPending", capsCountOnlyPending},
		{"ReuseIdenticalCall", reuse},
		{"WaitWakesOnResolve", waitWakes},
		{"WaitEndsWithContext", waitContext},
		{"WithdrawWakesWaiters", withdraw},
		{"ListNewestFirstFiltered", list},
		{"LookupByBinding", lookup},
		{"LookupEndsWithTheEntry", lookupEnds},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

func bind(who string) suspend.Binding {
	return suspend.Binding{Principal: who, Session: "s1", Tool: "write", Digest: "d1"}
}

func req(k suspend.Kind, who string) suspend.Request {
	return suspend.Request{Kind: k, Binding: bind(who), TTL: time.Minute, Data: []byte(`{"policy":"p"}`)}
}

func mustCreate(t *testing.T, s suspend.Store, r suspend.Request) suspend.Entry {
	t.Helper()
	e, err := s.Create(context.Background(), r)
	if err != nil {
		t.Fatalf("Create(%+v): %v", r, err)
	}
	return e
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err %v, want %v", what, err, want)
	}
}

func createAndGet(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	seen := map[string]bool{}
	for _, k := range []suspend.Kind{suspend.KindApproval, suspend.KindQuestion, suspend.KindElicitation, suspend.KindSampling, suspend.KindInput, suspend.KindRun} {
		e := mustCreate(t, s, req(k, "alice"))
		if seen[e.ID] || suspend.KindOf(e.ID) != k {
			t.Fatalf("id %q: duplicate or KindOf %q, want %q", e.ID, suspend.KindOf(e.ID), k)
		}
		seen[e.ID] = true
		if e.State != suspend.Pending || e.Binding != bind("alice") || string(e.Data) != `{"policy":"p"}` || e.Reused {
			t.Fatalf("created %+v", e)
		}
		if d := e.ExpiresAt.Sub(e.CreatedAt); d != time.Minute {
			t.Fatalf("expires %v after creation, want 1m", d)
		}
		got, err := s.Get(ctx, e.ID)
		if err != nil || got.ID != e.ID || got.State != suspend.Pending || got.Binding != e.Binding || string(got.Data) != string(e.Data) {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, e)
		}
	}
	_, err := s.Get(ctx, "apr_NOPE")
	wantErr(t, "Get of an unknown id", err, suspend.ErrUnknown)
}

func invalidRequests(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	for name, r := range map[string]suspend.Request{
		"no kind": {Binding: bind("a"), TTL: time.Minute},
		"no ttl":  {Kind: suspend.KindApproval, Binding: bind("a")},
		"no tool": {Kind: suspend.KindApproval, Binding: suspend.Binding{Principal: "a"}, TTL: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Create(ctx, r)
			wantErr(t, "Create", err, suspend.ErrInvalid)
		})
	}
	e := mustCreate(t, s, req(suspend.KindApproval, "a"))
	_, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Claimed, By: "ops"})
	wantErr(t, "Resolve to claimed", err, suspend.ErrInvalid)
}

func resolveOnce(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	got, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops", Reason: "fine"})
	if err != nil || got.State != suspend.Approved || got.By != "ops" || got.Reason != "fine" || got.ResolvedAt.IsZero() {
		t.Fatalf("Resolve = %+v, %v", got, err)
	}
	_, err = s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Denied, By: "ops2"})
	wantErr(t, "second Resolve", err, suspend.ErrAlreadyAnswered)
	_, err = s.Resolve(ctx, "apr_NOPE", suspend.Resolution{To: suspend.Denied, By: "ops"})
	wantErr(t, "Resolve of an unknown id", err, suspend.ErrUnknown)
	if got, _ := s.Get(ctx, e.ID); got.State != suspend.Approved || got.By != "ops" {
		t.Fatalf("after a refused second Resolve: %+v", got)
	}
}

func concurrentResolutions(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindElicitation, "alice"))
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bind("alice")
			_, errs[i] = s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Answer: []byte(fmt.Sprint(i)), Require: &b})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("two resolutions won: %d and %d", won, i)
		case err == nil:
			won = i
		default:
			wantErr(t, "losing Resolve", err, suspend.ErrAlreadyAnswered)
		}
	}
	got, _ := s.Get(ctx, e.ID)
	if won < 0 || string(got.Answer) != fmt.Sprint(won) {
		t.Fatalf("winner %d, stored answer %q", won, got.Answer)
	}
}

func answerBound(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindElicitation, "alice"))
	other := func(f func(*suspend.Binding)) *suspend.Binding { b := bind("alice"); f(&b); return &b }
	for _, c := range []struct {
		name    string
		require *suspend.Binding
		want    error
	}{
		{"another principal reads unknown", other(func(b *suspend.Binding) { b.Principal = "mallory" }), suspend.ErrUnknown},
		{"another tool", other(func(b *suspend.Binding) { b.Tool = "bash" }), suspend.ErrMismatch},
		{"other arguments", other(func(b *suspend.Binding) { b.Digest = "d2" }), suspend.ErrMismatch},
		{"another session", other(func(b *suspend.Binding) { b.Session = "s2" }), suspend.ErrMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: c.require.Principal, Answer: []byte("x"), Require: c.require})
			wantErr(t, "Resolve", err, c.want)
		})
	}
	b := bind("alice")
	got, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Answer: []byte(`{"name":"Ada"}`), Require: &b})
	if err != nil || got.State != suspend.Answered || string(got.Answer) != `{"name":"Ada"}` {
		t.Fatalf("the owner's answer: %+v, %v", got, err)
	}
}

func claimOnce(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(ctx, e.ID, bind("alice"))
	if err != nil || got.State != suspend.Claimed {
		t.Fatalf("Claim = %+v, %v", got, err)
	}
	_, err = s.Claim(ctx, e.ID, bind("alice"))
	wantErr(t, "second Claim", err, suspend.ErrClaimed)
}

func claimBound(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    suspend.Binding
		want error
	}{
		{"unknown id", bind("alice"), suspend.ErrUnknown},
		{"another principal", bind("mallory"), suspend.ErrUnknown},
		{"another tool", suspend.Binding{Principal: "alice", Session: "s1", Tool: "bash", Digest: "d1"}, suspend.ErrMismatch},
		{"other arguments", suspend.Binding{Principal: "alice", Session: "s1", Tool: "write", Digest: "d2"}, suspend.ErrMismatch},
		{"another session", suspend.Binding{Principal: "alice", Session: "s2", Tool: "write", Digest: "d1"}, suspend.ErrMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := e.ID
			if c.name == "unknown id" {
				id = "apr_NOPE"
			}
			_, err := s.Claim(ctx, id, c.b)
			wantErr(t, "Claim", err, c.want)
		})
	}
	if _, err := s.Claim(ctx, e.ID, bind("alice")); err != nil {
		t.Fatalf("refused claims used the approval up: %v", err)
	}
}

func claimDeniedOrPending(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	e := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	_, err := s.Claim(ctx, e.ID, bind("alice"))
	wantErr(t, "Claim while pending", err, suspend.ErrNotYet)
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Denied, By: "ops", Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim(ctx, e.ID, bind("alice"))
	wantErr(t, "Claim of a denied approval", err, suspend.ErrDenied)
	a := mustCreate(t, s, req(suspend.KindElicitation, "alice"))
	if _, err := s.Resolve(ctx, a.ID, suspend.Resolution{To: suspend.Answered, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Claim(ctx, a.ID, bind("alice"))
	wantErr(t, "Claim of an answered entry", err, suspend.ErrAlreadyAnswered)
}

// waitExpiry waits for e to leave Pending and checks it expired.
func waitExpiry(t *testing.T, s suspend.Store, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := s.Wait(ctx, id)
	if err != nil || got.State != suspend.Expired {
		t.Fatalf("Wait for expiry = %+v, %v", got, err)
	}
}

func expiry(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindElicitation, "alice")
	r.TTL = 20 * time.Millisecond
	e := mustCreate(t, s, r)
	waitExpiry(t, s, e.ID)
	if got, err := s.Get(ctx, e.ID); err != nil || got.State != suspend.Expired {
		t.Fatalf("Get after expiry = %+v, %v", got, err)
	}
	b := bind("alice")
	_, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Require: &b})
	wantErr(t, "Resolve after expiry", err, suspend.ErrExpired)
	_, err = s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"})
	wantErr(t, "approver's Resolve after expiry", err, suspend.ErrExpired)
}

func approvedExpires(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindApproval, "alice")
	r.TTL = 50 * time.Millisecond
	e := mustCreate(t, s, r)
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	// The approved entry stays claimable until its deadline, then not.
	for {
		got, err := s.Get(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == suspend.Expired {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err := s.Claim(ctx, e.ID, bind("alice"))
	wantErr(t, "Claim after expiry", err, suspend.ErrExpired)
}

func expiredUnknownToOthers(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindElicitation, "alice")
	r.TTL = 20 * time.Millisecond
	e := mustCreate(t, s, r)
	waitExpiry(t, s, e.ID)
	b := bind("mallory")
	_, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "mallory", Require: &b})
	wantErr(t, "another principal's answer to an expired id", err, suspend.ErrUnknown)
	_, err = s.Claim(ctx, e.ID, b)
	wantErr(t, "another principal's claim of an expired id", err, suspend.ErrUnknown)
}

func capPerPrincipal(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindApproval, "alice")
	r.MaxPerPrincipal = 2
	for i := range 2 {
		r.Digest = fmt.Sprint("d", i)
		mustCreate(t, s, r)
	}
	r.Digest = "d9"
	_, err := s.Create(ctx, r)
	wantErr(t, "alice's third", err, suspend.ErrCapped)
	var ce *suspend.CapError
	if !errors.As(err, &ce) || ce.Principal != "alice" || ce.Max != 2 {
		t.Fatalf("cap error %#v", err)
	}
	bob := req(suspend.KindApproval, "bob")
	bob.MaxPerPrincipal = 2
	mustCreate(t, s, bob) // alice's entries do not block bob
	q := req(suspend.KindQuestion, "alice")
	q.MaxPerPrincipal = 2
	mustCreate(t, s, q) // nor alice's questions: caps are per kind
}

func capTotal(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	for i, who := range []string{"a", "b", "c"} {
		r := req(suspend.KindApproval, who)
		r.MaxTotal, r.MaxPerPrincipal = 3, 5
		r.Digest = fmt.Sprint("d", i)
		mustCreate(t, s, r)
	}
	r := req(suspend.KindApproval, "d")
	r.MaxTotal, r.MaxPerPrincipal = 3, 5
	_, err := s.Create(ctx, r)
	wantErr(t, "the fourth of all", err, suspend.ErrCapped)
	var ce *suspend.CapError
	if !errors.As(err, &ce) || ce.Principal != "" || ce.Max != 3 {
		t.Fatalf("cap error %#v", err)
	}
}

func capsCountOnlyPending(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindElicitation, "alice")
	r.MaxPerPrincipal = 1
	e := mustCreate(t, s, r)
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, r) // the answered one no longer counts
	r.Digest = "d2"
	_, err := s.Create(ctx, r)
	wantErr(t, "over the cap again", err, suspend.ErrCapped)
	// A withdrawn entry frees its slot too.
	list, _ := s.List(ctx, suspend.Filter{Principal: "alice", Open: true})
	if len(list) != 1 {
		t.Fatalf("open entries %+v", list)
	}
	if ok, err := s.Withdraw(ctx, list[0].ID); !ok || err != nil {
		t.Fatalf("Withdraw = %v, %v", ok, err)
	}
	mustCreate(t, s, r)
	// And so does an expired one.
	short := req(suspend.KindSampling, "alice")
	short.MaxPerPrincipal, short.TTL = 1, 20*time.Millisecond
	e = mustCreate(t, s, short)
	waitExpiry(t, s, e.ID)
	mustCreate(t, s, short)
}

func reuse(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindApproval, "alice")
	r.Reuse, r.MaxPerPrincipal = true, 1
	first := mustCreate(t, s, r)
	again := mustCreate(t, s, r) // under the cap of 1: reused, not added
	if again.ID != first.ID || !again.Reused {
		t.Fatalf("identical call: %+v, want reuse of %s", again, first.ID)
	}
	other := r
	other.Session = "s2"
	other.MaxPerPrincipal = 2
	if e := mustCreate(t, s, other); e.ID == first.ID || e.Reused {
		t.Fatalf("another session reused %s", e.ID)
	}
	if _, err := s.Resolve(ctx, first.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	if e := mustCreate(t, s, r); e.ID != first.ID || e.State != suspend.Approved {
		t.Fatalf("approved and unclaimed: %+v, want reuse of %s", e, first.ID)
	}
	if _, err := s.Claim(ctx, first.ID, r.Binding); err != nil {
		t.Fatal(err)
	}
	r.MaxPerPrincipal = 2 // the session s2 entry is still pending
	if e := mustCreate(t, s, r); e.ID == first.ID || e.Reused {
		t.Fatalf("a used approval was reused: %+v", e)
	}
	noReuse := r
	noReuse.Reuse, noReuse.MaxPerPrincipal = false, 0
	if e := mustCreate(t, s, noReuse); e.Reused {
		t.Fatalf("Reuse false reused %+v", e)
	}
}

func waitWakes(t *testing.T, s suspend.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e := mustCreate(t, s, req(suspend.KindSampling, "alice"))
	type res struct {
		e   suspend.Entry
		err error
	}
	got := make(chan res, 2)
	for range 2 {
		go func() {
			e, err := s.Wait(ctx, e.ID)
			got <- res{e, err}
		}()
	}
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Answer: []byte("42")}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := <-got
		if r.err != nil || r.e.State != suspend.Answered || string(r.e.Answer) != "42" {
			t.Fatalf("Wait = %+v, %v", r.e, r.err)
		}
	}
	// A resolved entry answers Wait at once.
	if r, err := s.Wait(ctx, e.ID); err != nil || r.State != suspend.Answered {
		t.Fatalf("Wait after resolution = %+v, %v", r, err)
	}
	_, err := s.Wait(ctx, "sampling_NOPE")
	wantErr(t, "Wait on an unknown id", err, suspend.ErrUnknown)
}

func waitContext(t *testing.T, s suspend.Store) {
	e := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Wait(ctx, e.ID)
		done <- err
	}()
	cancel()
	wantErr(t, "Wait after cancel", <-done, context.Canceled)
	if got, _ := s.Get(context.Background(), e.ID); got.State != suspend.Pending {
		t.Fatalf("a waiter's cancel changed the entry: %+v", got)
	}
}

func withdraw(t *testing.T, s suspend.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e := mustCreate(t, s, req(suspend.KindInput, "alice"))
	done := make(chan error, 1)
	go func() {
		_, err := s.Wait(ctx, e.ID)
		done <- err
	}()
	if ok, err := s.Withdraw(ctx, e.ID); !ok || err != nil {
		t.Fatalf("Withdraw = %v, %v", ok, err)
	}
	wantErr(t, "Wait on a withdrawn entry", <-done, suspend.ErrUnknown)
	if ok, err := s.Withdraw(ctx, e.ID); ok || err != nil {
		t.Fatalf("second Withdraw = %v, %v", ok, err)
	}
	_, err := s.Get(ctx, e.ID)
	wantErr(t, "Get after Withdraw", err, suspend.ErrUnknown)
	b := bind("alice")
	_, err = s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Require: &b})
	wantErr(t, "an answer after Withdraw", err, suspend.ErrUnknown)
}

func list(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	a1 := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	b1 := mustCreate(t, s, req(suspend.KindApproval, "bob"))
	q1 := mustCreate(t, s, req(suspend.KindQuestion, "alice"))
	if _, err := s.Resolve(ctx, b1.ID, suspend.Resolution{To: suspend.Denied, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    suspend.Filter
		want []string
	}{
		{"all", suspend.Filter{}, []string{q1.ID, b1.ID, a1.ID}},
		{"approvals", suspend.Filter{Kind: suspend.KindApproval}, []string{b1.ID, a1.ID}},
		{"alice", suspend.Filter{Principal: "alice"}, []string{q1.ID, a1.ID}},
		{"open", suspend.Filter{Open: true}, []string{q1.ID, a1.ID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.List(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, e := range got {
				gotIDs = append(gotIDs, e.ID)
			}
			if fmt.Sprint(gotIDs) != fmt.Sprint(c.want) {
				t.Fatalf("List(%+v) = %v, want %v", c.f, gotIDs, c.want)
			}
		})
	}
}

// lookup: the open entry of a kind and binding is found by them, the
// newest when there are several, and nothing of another kind, principal,
// session, tool or arguments is.
func lookup(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	r := req(suspend.KindRun, "alice")
	first := mustCreate(t, s, r)
	got, err := s.Lookup(ctx, suspend.KindRun, r.Binding)
	if err != nil || got.ID != first.ID || string(got.Data) != string(r.Data) {
		t.Fatalf("Lookup = %+v, %v; want %s", got, err, first.ID)
	}
	newer := mustCreate(t, s, r)
	if got, err := s.Lookup(ctx, suspend.KindRun, r.Binding); err != nil || got.ID != newer.ID {
		t.Fatalf("Lookup after a second entry = %+v, %v; want the newer %s", got, err, newer.ID)
	}
	others := map[string]func(*suspend.Binding){
		"principal": func(b *suspend.Binding) { b.Principal = "mallory" },
		"session":   func(b *suspend.Binding) { b.Session = "s2" },
		"tool":      func(b *suspend.Binding) { b.Tool = "bash" },
		"arguments": func(b *suspend.Binding) { b.Digest = "d2" },
	}
	for what, change := range others {
		b := r.Binding
		change(&b)
		_, err := s.Lookup(ctx, suspend.KindRun, b)
		wantErr(t, "Lookup with another "+what, err, suspend.ErrUnknown)
	}
	_, err = s.Lookup(ctx, suspend.KindApproval, r.Binding)
	wantErr(t, "Lookup of another kind", err, suspend.ErrUnknown)
}

// lookupEnds: an answered, claimed, withdrawn or expired entry is no
// longer found; an approved one is, until it is claimed.
func lookupEnds(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	gone := func(what string, k suspend.Kind, b suspend.Binding) {
		t.Helper()
		_, err := s.Lookup(ctx, k, b)
		wantErr(t, "Lookup "+what, err, suspend.ErrUnknown)
	}
	answered := mustCreate(t, s, req(suspend.KindRun, "alice"))
	if _, err := s.Resolve(ctx, answered.ID, suspend.Resolution{To: suspend.Answered, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	gone("after an answer", suspend.KindRun, bind("alice"))

	apr := req(suspend.KindApproval, "bob")
	e := mustCreate(t, s, apr)
	if _, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Lookup(ctx, suspend.KindApproval, apr.Binding); err != nil || got.ID != e.ID {
		t.Fatalf("approved, unclaimed: %+v, %v", got, err)
	}
	if _, err := s.Claim(ctx, e.ID, apr.Binding); err != nil {
		t.Fatal(err)
	}
	gone("after the claim", suspend.KindApproval, apr.Binding)

	w := mustCreate(t, s, req(suspend.KindRun, "carol"))
	if _, err := s.Withdraw(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	gone("after a withdrawal", suspend.KindRun, bind("carol"))

	short := req(suspend.KindRun, "dave")
	short.TTL = 20 * time.Millisecond
	x := mustCreate(t, s, short)
	waitExpiry(t, s, x.ID)
	gone("after expiry", suspend.KindRun, bind("dave"))
}
