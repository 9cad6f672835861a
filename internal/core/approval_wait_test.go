package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// TestApprovalWaitEndsWhenTheApprovalIsGone: a streamed call waiting for
// an approval that the store no longer holds is refused at once. The wait
// loop used to take every error from Wait for a heartbeat and spin until
// the call's context ended.
func TestApprovalWaitEndsWhenTheApprovalIsGone(t *testing.T) {
	mem := suspend.NewMemory(nil, 0)
	g := &callGate{c: &Core{pol: policyParts{suspended: mem, approvals: approval.New(mem, approval.Limits{MaxPerPrincipal: 5, Timeout: time.Hour})}},
		call: Call{Stream: true}}
	bind := suspend.Binding{Principal: "alice", Tool: "write", Digest: "d"}
	ent, err := g.c.pol.approvals.Create(context.Background(), approval.Request{Binding: bind, Policy: "p"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan *tool.Result, 1)
	go func() {
		r, _ := g.wait(ctx, &registry.Entry{Tool: &tool.Tool{Name: "write"}}, ent, bind)
		done <- r
	}()
	if _, err := mem.Withdraw(ctx, ent.ID); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if ctx.Err() != nil {
		t.Fatal("the wait spun until its context ended")
	}
	if r == nil || r.Outcome != tool.OutcomeDenied || !strings.Contains(r.Output, "no such approval") {
		t.Fatalf("result %+v, want a denial naming the missing approval", r)
	}
}
