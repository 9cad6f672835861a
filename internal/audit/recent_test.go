package audit_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/config"
)

// The log keeps its newest call lines, newest first, bounded, filtered by
// the reader, and never their arguments; nothing while it is off.
func TestRecentCalls(t *testing.T) {
	l := audit.New(io.Discard)
	l.Execute(context.Background(), audit.Call{Tool: "before", Principal: "x"})
	if got := l.Recent(10, nil); len(got) != 0 {
		t.Fatalf("kept %d lines while off", len(got))
	}
	if err := l.Configure(config.Audit{Enabled: true, Arguments: true}, ""); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	total := audit.RecentCalls + 50
	for i := range total {
		who := "alice"
		if i%2 == 1 {
			who = "bob"
		}
		l.Execute(context.Background(), audit.Call{Method: "Execute", Principal: who, Tool: fmt.Sprintf("t%d", i), Outcome: "ok",
			Arguments: []byte(`{"password":"hunter2"}`)})
	}
	all := l.Recent(total, nil)
	if len(all) != audit.RecentCalls {
		t.Fatalf("kept %d, want the bound %d", len(all), audit.RecentCalls)
	}
	if all[0].Tool != fmt.Sprintf("t%d", total-1) || all[len(all)-1].Tool != fmt.Sprintf("t%d", total-audit.RecentCalls) {
		t.Fatalf("order: newest %s, oldest %s", all[0].Tool, all[len(all)-1].Tool)
	}
	if all[0].ArgumentBytes != len(`{"password":"hunter2"}`) || strings.Contains(fmt.Sprintf("%+v", all), "hunter2") {
		t.Fatalf("a recorded line shows its arguments: %+v", all[0])
	}
	bobs := l.Recent(5, func(r *audit.Recorded) bool { return r.Principal == "bob" })
	if len(bobs) != 5 || bobs[0].Principal != "bob" || bobs[4].Principal != "bob" {
		t.Fatalf("filtered: %+v", bobs)
	}
}

// Writers and readers at once: the race detector checks the ring.
func TestRecentConcurrent(t *testing.T) {
	l := audit.New(io.Discard)
	if err := l.Configure(config.Audit{Enabled: true}, ""); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				l.Execute(context.Background(), audit.Call{Tool: fmt.Sprintf("w%d-%d", w, i)})
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			if n := len(l.Recent(audit.RecentCalls, nil)); n > audit.RecentCalls {
				t.Errorf("%d lines", n)
			}
		}
	})
	wg.Wait()
}
