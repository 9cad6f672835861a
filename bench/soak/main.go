// Command soak is `make soak`: reliability drills against a real toolnexus
// server process on loopback, bounded in calls and time.
//
//	R1  a flood of Execute calls at 64 concurrency with 10% panics, 10%
//	    tool failures and 1% calls that sleep past their deadline: every
//	    call gets an answer, the server never restarts, goroutines and
//	    memory come back down.
//	R2  kill -9 a stdio MCP server under load: its calls fail fast, the
//	    source restarts it, its tools come back, other sources see no error.
//	R3  reloads during calls: no call to a tool present in both configs fails.
//
// --short runs a reduced version for CI (well under two minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/toolnexus/toolnexus/bench/serverproc"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

type plan struct {
	r1Calls      int
	r2Duration   time.Duration
	r3Reloads    int
	r3Calls      int
	concurrency  int
	settleWindow time.Duration
}

func main() {
	short := flag.Bool("short", false, "reduced drill for CI")
	serverBin := flag.String("server", "../bin/toolnexus-server", "server binary to drill (relative to bench/, where `make soak` runs this)")
	flag.Parse()
	p := plan{r1Calls: 1_000_000, r2Duration: 20 * time.Second, r3Reloads: 100, r3Calls: 100_000, concurrency: 64, settleWindow: 5 * time.Second}
	if *short {
		p = plan{r1Calls: 30_000, r2Duration: 6 * time.Second, r3Reloads: 10, r3Calls: 10_000, concurrency: 64, settleWindow: 2 * time.Second}
	}
	failed, err := run(*serverBin, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if failed > 0 {
		fmt.Printf("\nFAIL: %d check(s) failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("\nPASS: every check held")
}

type checker struct{ failed int }

func (c *checker) check(ok bool, format string, args ...any) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		c.failed++
	}
	fmt.Printf("  [%s] %s\n", mark, fmt.Sprintf(format, args...))
}

func configText(mcpecho string, variant int) string {
	// Variant 1 adds the ten builtins and changes a limit: a real change of
	// tool set and limits on every reload, while debug_echo and echo_echo
	// stay in both.
	builtins := "false"
	maxOut := 1048576
	if variant == 1 {
		builtins = "true"
		maxOut = 524288
	}
	return fmt.Sprintf(`{
  "debug": true,
  "builtins": %s,
  "mcpServers": {"echo": {"command": [%q], "timeout": 10000}},
  "limits": {"maxOutputBytes": %d, "tools": {"debug_sleep": {"timeout": 20}}}
}`, builtins, mcpecho, maxOut)
}

func run(serverBin string, p plan) (int, error) {
	dir, err := os.MkdirTemp("", "toolnexus-soak-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	mcpecho := filepath.Join(dir, "mcpecho")
	if err := serverproc.Build(mcpecho, "mcpecho"); err != nil {
		return 0, err
	}
	srv, err := serverproc.Start(serverBin, dir, configText(mcpecho, 0))
	if err != nil {
		return 0, err
	}
	defer srv.Stop()
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	client := pb.NewRegistryServiceClient(conn)
	if err := waitForTool(client, "echo_echo", 30*time.Second); err != nil {
		return 0, err
	}
	c := &checker{}
	pid := srv.Cmd.Process.Pid
	startTime, _ := srv.Metric("process_start_time_seconds")

	r1(client, srv, p, c)
	r2(client, srv, p, c)
	r3(client, srv, mcpecho, p, c)

	fmt.Println("\nEnd")
	after, _ := srv.Metric("process_start_time_seconds")
	c.check(srv.Cmd.ProcessState == nil && after == startTime && pid == srv.Cmd.Process.Pid, "server restarts: 0 (same pid %d, same start time)", pid)
	if err := srv.Stop(); err != nil {
		c.check(false, "SIGTERM: server exited with %v", err)
	} else {
		c.check(true, "SIGTERM: server exited 0")
	}
	c.check(len(serverproc.Children(pid)) == 0, "no child process left after shutdown")
	return c.failed, nil
}

func waitForTool(client pb.RegistryServiceClient, name string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := client.GetTool(context.Background(), &pb.GetToolRequest{Name: name})
		if err == nil && resp.GetTool() != nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("tool %s did not appear within %s", name, within)
}

// outcomes counts results by outcome name (plus the caller-side deadline).
type outcomes struct {
	mu sync.Mutex
	m  map[string]int
}

func (o *outcomes) add(k string) {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[string]int{}
	}
	o.m[k]++
	o.mu.Unlock()
}

func (o *outcomes) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var parts []string
	for _, k := range []string{"OUTCOME_OK", "OUTCOME_TOOL_ERROR", "OUTCOME_PANIC", "OUTCOME_TIMEOUT", "DEADLINE_EXCEEDED", "other"} {
		if n := o.m[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "OUTCOME_"), n))
		}
	}
	return strings.Join(parts, " ")
}

func r1(client pb.RegistryServiceClient, srv *serverproc.Proc, p plan, c *checker) {
	fmt.Printf("R1  %d Execute calls at %d concurrency: 10%% debug_panic, 10%% debug_fail, 1%% debug_sleep past its deadline\n", p.r1Calls, p.concurrency)
	goBefore, _ := srv.Metric("go_goroutines")
	rssBefore, _ := srv.Metric("process_resident_memory_bytes")
	var sent, received, wrong atomic.Int64
	var out outcomes
	start := time.Now()
	callsInParallel(p.concurrency, p.r1Calls, func(i int64) {
		req, want, deadline := r1Call(i)
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		sent.Add(1)
		resp, err := client.Execute(ctx, req)
		cancel()
		switch {
		case err == nil:
			received.Add(1)
			got := resp.GetResult().GetOutcome().String()
			out.add(got)
			if got != want {
				wrong.Add(1)
			}
		case status.Code(err) == codes.DeadlineExceeded && want == "DEADLINE_EXCEEDED":
			received.Add(1)
			out.add("DEADLINE_EXCEEDED")
		default:
			out.add("other")
			wrong.Add(1)
		}
	})()
	took := time.Since(start)
	time.Sleep(p.settleWindow) // let finished calls' goroutines exit before counting
	goAfter, _ := srv.Metric("go_goroutines")
	rssAfter, _ := srv.Metric("process_resident_memory_bytes")
	fmt.Printf("  %d calls in %s (%.0f calls/s); outcomes: %s\n", sent.Load(), took.Round(time.Millisecond), float64(sent.Load())/took.Seconds(), out.String())
	c.check(sent.Load() == received.Load(), "calls sent %d = responses received %d", sent.Load(), received.Load())
	c.check(wrong.Load() == 0, "every call had its expected outcome (%d did not)", wrong.Load())
	c.check(goAfter <= goBefore+10, "server goroutines before %.0f, after %.0f", goBefore, goAfter)
	c.check(rssAfter < rssBefore+256<<20, "server RSS before %.1f MiB, after %.1f MiB", rssBefore/(1<<20), rssAfter/(1<<20))
}

// callsInParallel makes calls 0 to total-1 from n goroutines, each taking
// the next number as it is free, so n calls are in flight until the last;
// the wait it returns returns once every call has. R1 and R3 drive their
// calls this way.
func callsInParallel(n, total int, call func(i int64)) (wait func()) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(total) {
					return
				}
				call(i)
			}
		}()
	}
	return wg.Wait
}

// r1Call picks call i of the mix deterministically (no RNG: reproducible).
func r1Call(i int64) (req *pb.ExecuteRequest, wantOutcome string, deadline time.Duration) {
	mk := func(name, args string) *pb.ExecuteRequest {
		return &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}}
	}
	switch m := i % 100; {
	case m < 10:
		return mk("debug_panic", `{"message":"soak panic"}`), "OUTCOME_PANIC", 10 * time.Second
	case m < 20:
		return mk("debug_fail", `{"message":"soak failure"}`), "OUTCOME_TOOL_ERROR", 10 * time.Second
	case m == 20:
		// Sleeps 1 s under a 20 ms tool limit (limits.tools.debug_sleep) and
		// a 10 ms caller deadline: either way it must end early.
		return mk("debug_sleep", `{"ms":1000}`), "DEADLINE_EXCEEDED", 10 * time.Millisecond
	default:
		return mk("debug_echo", `{"i":1,"message":"soak"}`), "OUTCOME_OK", 10 * time.Second
	}
}

func r2(client pb.RegistryServiceClient, srv *serverproc.Proc, p plan, c *checker) {
	fmt.Printf("\nR2  kill -9 the stdio MCP server under load (%s)\n", p.r2Duration)
	kids := serverproc.Children(srv.Cmd.Process.Pid)
	if len(kids) == 0 {
		c.check(false, "found the MCP child process")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.r2Duration)
	defer cancel()
	var killedAt atomic.Int64 // unix nanos
	var firstErrAfterKill, backAt atomic.Int64
	var echoErrs, echoOK, otherErrs, otherOK atomic.Int64
	var maxErrLatency atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "echo_echo"
			if g%2 == 1 {
				name = "debug_echo"
			}
			req := &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"x":1}`}}
			for ctx.Err() == nil {
				t0 := time.Now()
				resp, err := client.Execute(context.Background(), req)
				lat := time.Since(t0)
				bad := err != nil || resp.GetResult().GetIsError()
				k := killedAt.Load()
				switch {
				case name == "debug_echo" && bad:
					otherErrs.Add(1)
				case name == "debug_echo":
					otherOK.Add(1)
				case bad:
					echoErrs.Add(1)
					if k > 0 {
						firstErrAfterKill.CompareAndSwap(0, time.Now().UnixNano())
					}
					for {
						m := maxErrLatency.Load()
						if int64(lat) <= m || maxErrLatency.CompareAndSwap(m, int64(lat)) {
							break
						}
					}
				default:
					echoOK.Add(1)
					// Back only counts for a call that began after the
					// failures did: one already in flight proves nothing.
					if fe := firstErrAfterKill.Load(); k > 0 && fe > 0 && t0.UnixNano() > fe {
						backAt.CompareAndSwap(0, time.Now().UnixNano())
					}
				}
			}
		}()
	}
	time.Sleep(p.r2Duration / 4)
	killedAt.Store(time.Now().UnixNano())
	for _, pid := range kids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	wg.Wait()
	k := killedAt.Load()
	fmt.Printf("  killed pid %v; echo_echo: %d ok, %d is_error; debug_echo: %d ok, %d errors\n", kids, echoOK.Load(), echoErrs.Load(), otherOK.Load(), otherErrs.Load())
	c.check(echoErrs.Load() > 0 && firstErrAfterKill.Load() > 0, "calls to the dead server turned to is_error (first after %s)", durSince(k, firstErrAfterKill.Load()))
	c.check(time.Duration(maxErrLatency.Load()) < 2*time.Second, "failing calls failed fast: slowest %s (the server timeout is 10s)", time.Duration(maxErrLatency.Load()).Round(time.Millisecond))
	c.check(backAt.Load() > 0, "the source restarted the server and its tools answered again %s after the kill", durSince(k, backAt.Load()))
	c.check(otherErrs.Load() == 0, "other sources' error rate: %d of %d", otherErrs.Load(), otherOK.Load()+otherErrs.Load())
	now := serverproc.Children(srv.Cmd.Process.Pid)
	c.check(len(now) == 1 && now[0] != kids[0], "one new MCP child process (pid %v)", now)
}

func durSince(from, to int64) string {
	if from == 0 || to == 0 {
		return "never"
	}
	return time.Duration(to - from).Round(time.Millisecond).String()
}

func r3(client pb.RegistryServiceClient, srv *serverproc.Proc, mcpecho string, p plan, c *checker) {
	fmt.Printf("\nR3  %d reloads during %d calls\n", p.r3Reloads, p.r3Calls)
	okBefore, _ := srv.Metric(`toolnexus_reloads_total{result="ok"}`)
	var failures, done atomic.Int64
	stop := make(chan struct{})
	wait := callsInParallel(p.concurrency, p.r3Calls, func(i int64) {
		name := "debug_echo"
		if i%2 == 0 {
			name = "echo_echo"
		}
		resp, err := client.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"r":3}`}})
		if err != nil || resp.GetResult().GetIsError() {
			failures.Add(1)
			if failures.Load() <= 3 {
				fmt.Printf("  failure: %s: %v %v\n", name, err, resp.GetResult())
			}
		}
		done.Add(1)
	})
	go func() { wait(); close(stop) }()
	reloads := 0
	for reloads < p.r3Reloads {
		// Spread the reloads over the calls: one each time another slice is done.
		target := int64(p.r3Calls) * int64(reloads+1) / int64(p.r3Reloads+1)
		for done.Load() < target {
			select {
			case <-stop:
			case <-time.After(time.Millisecond):
				continue
			}
			break
		}
		if err := srv.Reload(configText(mcpecho, (reloads+1)%2)); err != nil {
			c.check(false, "reload %d: %v", reloads, err)
			break
		}
		reloads++
		// SIGHUPs are not queued: wait until this one is applied.
		waitMetric(srv, `toolnexus_reloads_total{result="ok"}`, okBefore+float64(reloads), 10*time.Second)
	}
	<-stop
	okAfter, _ := srv.Metric(`toolnexus_reloads_total{result="ok"}`)
	c.check(int(okAfter-okBefore) == reloads && reloads == p.r3Reloads, "reloads applied: %d of %d", int(okAfter-okBefore), p.r3Reloads)
	c.check(failures.Load() == 0, "failures on tools present in both configs: %d of %d calls", failures.Load(), done.Load())
}

func waitMetric(srv *serverproc.Proc, name string, atLeast float64, within time.Duration) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if v, _ := srv.Metric(name); v >= atLeast {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
