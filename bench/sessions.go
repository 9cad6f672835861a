package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// inSession names a session on a call, as an agent's client does.
func inSession(id string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "toolnexus-session", id)
}

func runSessions(serverBin string, reps int) error {
	return printRowsAlone(func(rep *report, tmp string) error { return sessionRows(rep, serverBin, tmp, reps) })
}

// sessionRows are rows 11 and 12: what a new session costs its first call,
// and what 10,000 idle sessions cost a server's memory.
func sessionRows(rep *report, serverBin, tmp string, reps int) error {
	dir := filepath.Join(tmp, "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srv, err := startServer(dir, `{"skills": [], "builtins": {"tools": {"webfetch": false}}, "sessions": {"max": 0}}`, false)
	if err != nil {
		return err
	}
	defer srv.stop()
	// glob works in the session's workspace (and has it measured after the
	// call) without writing, so both sides do the same work on the files.
	req := &pb.ExecuteRequest{Name: "glob", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"pattern": "*.txt"}`}}
	call := func(id string) {
		resp, err := srv.client.Execute(inSession(id), req)
		if err == nil && resp.GetResult().GetIsError() {
			err = fmt.Errorf("%s", resp.GetResult().GetOutput())
		}
		if err != nil {
			rep.notes = append(rep.notes, fmt.Sprintf("session row: %v", err))
		}
	}
	call("existing")
	// Alternating blocks, best median of each side: a new session's first
	// call (directory, metadata file) against the same write in a session
	// that already has them.
	const n = 300
	next := 0
	fresh, existing := time.Duration(1<<62), time.Duration(1<<62)
	for range reps {
		fresh = min(fresh, timeIt(n, func() { next++; call(fmt.Sprintf("new-%06d", next)) }))
		existing = min(existing, timeIt(n, func() { call("existing") }))
	}
	rep.row("| 11 | first call in a new session vs a call in an existing one (glob in the workspace): p50 | 1 | %s | %s | %+.0f µs | ≤ +2 ms |",
		us(fresh), us(existing), float64((fresh-existing).Nanoseconds())/1e3)

	if serverBin == "" {
		return nil
	}
	none, err := sessionsRSS(serverBin, filepath.Join(tmp, "rss-sessions-0"), 0)
	if err != nil {
		return fmt.Errorf("RSS without sessions: %w", err)
	}
	many, err := sessionsRSS(serverBin, filepath.Join(tmp, "rss-sessions-10k"), 10000)
	if err != nil {
		return fmt.Errorf("RSS with 10,000 sessions: %w", err)
	}
	rep.row("| 12 | server RSS with 10,000 idle sessions vs the same 10,000 calls without sessions | — | %.1f MiB | %.1f MiB | +%.1f MiB | ≤ +50 MiB |",
		many/(1<<20), none/(1<<20), (many-none)/(1<<20))
	return nil
}

// sessionsRSS runs the real server binary, makes 10,000 debug_echo calls
// spread over n sessions (none when n is 0, so both sides have served the
// same calls), lists the tools once, and reads its resident memory.
func sessionsRSS(bin, dir string, n int) (float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	p, conn, err := startDialed(bin, dir, `{"debug": true, "builtins": false, "skills": [], "sessions": {"max": 0}}`)
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	defer conn.Close()
	c := pb.NewRegistryServiceClient(conn)
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: payload}}
	const calls = 10000
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= calls {
					return
				}
				ctx := context.Background()
				if n > 0 {
					ctx = inSession(fmt.Sprintf("idle-%05d", i%int64(n)))
				}
				if _, err := c.Execute(ctx, req); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	if got, err := p.Metric("toolnexus_sessions "); err != nil || int(got) != n {
		return 0, fmt.Errorf("toolnexus_sessions = %v (%v), want %d", got, err, n)
	}
	if _, err := c.ListTools(context.Background(), &pb.ListToolsRequest{}); err != nil {
		return 0, err
	}
	time.Sleep(time.Second) // let the calls' garbage be collected before reading RSS
	return p.Metric("process_resident_memory_bytes ")
}
