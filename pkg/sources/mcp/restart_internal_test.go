package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A server that keeps failing to come back is retried, paced, with the
// reason (its stderr) in the status, until it starts again.
func TestRestartKeepsTryingUntilTheServerStarts(t *testing.T) {
	bin := os.Getenv("MCP_TESTSERVER_BIN")
	if bin == "" {
		t.Fatal("MCP_TESTSERVER_BIN not set; TestMain builds it")
	}
	dir := t.TempDir()
	flag := filepath.Join(dir, "broken")
	script := filepath.Join(dir, "server.sh")
	body := "#!/bin/sh\nif [ -e '" + flag + "' ]; then echo 'cannot start: flag file present' >&2; exit 7; fi\nexec '" + bin + "' \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig{Type: TypeLocal, Command: []string{script}, Timeout: 10000,
		Restart: Restart{InitialBackoff: 1, MaxBackoff: 20, ResetAfter: 60000}}
	src := New("rs", cfg, sources.Env{Logger: slog.New(slog.DiscardHandler)})
	statuses := make(chan sources.Status, 1000)
	src.statusHook = func(st sources.Status) {
		select {
		case statuses <- st:
		default:
		}
	}
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	callPID := func() tool.Result {
		return testutil.Direct{Reg: reg}.Execute(context.Background(), "rs_pid", tool.Call{Arguments: json.RawMessage(`{}`)})
	}
	pid, err := strconv.Atoi(callPID().Output)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	next := func(what string) sources.Status {
		select {
		case st := <-statuses:
			return st
		case <-deadline.C:
			t.Fatalf("no status change while waiting for %s", what)
		}
		panic("unreachable")
	}
	st := next("restarting")
	for st.State == sources.Connected { // from Start, before the kill
		st = next("restarting")
	}
	for ; ; st = next("a third failed restart") {
		if st.State != sources.Restarting {
			t.Fatalf("status while the server cannot start = %+v", st)
		}
		if strings.Contains(st.Error, "restart 3 failed") {
			if !strings.Contains(st.Error, "cannot start: flag file present") {
				t.Fatalf("the reason is missing from %q", st.Error)
			}
			break
		}
	}
	if r := callPID(); !r.IsError || !strings.Contains(r.Output, "restarting") {
		t.Fatalf("call while restarts fail: %+v", r)
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	for st := next("connected"); st.State != sources.Connected; st = next("connected") {
	}
	if r := callPID(); r.IsError || r.Output == strconv.Itoa(pid) {
		t.Fatalf("after the server came back: %+v", r)
	}
}
