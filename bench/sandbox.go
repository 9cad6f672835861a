package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

func runSandbox(reps int) error {
	return printRowsAlone(func(rep *report, tmp string) error {
		// A root server's sandboxed commands act as uid 65534, which must be
		// able to reach the workspaces beneath tmp (MkdirTemp makes it 0700).
		if err := os.Chmod(tmp, 0o711); err != nil {
			return err
		}
		return sandboxRows(rep, tmp, reps)
	})
}

// sandboxRows are rows 13 and 14: bash running `true` with the sandbox on
// (mode auto) against the same server with it off, and what starting a
// process in the sandbox costs by itself.
func sandboxRows(rep *report, tmp string, reps int) error {
	var srvs [2]*running
	for i, mode := range []string{"off", "auto"} {
		dir := filepath.Join(tmp, "sandbox-"+mode)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		srv, err := startServer(dir, `{"skills": [], "sandbox": {"mode": "`+mode+`"}}`, false)
		if err != nil {
			return err
		}
		defer srv.stop()
		srvs[i] = srv
	}
	req := &pb.ExecuteRequest{Name: "bash", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "true"}`}}
	var failed error
	call := func(srv *running) {
		resp, err := srv.client.Execute(context.Background(), req)
		if err == nil && resp.GetResult().GetIsError() {
			err = fmt.Errorf("%s", resp.GetResult().GetOutput())
		}
		if err != nil && failed == nil {
			failed = err
		}
	}
	call(srvs[0])
	call(srvs[1])
	if failed != nil {
		return fmt.Errorf("sandbox row: %w", failed)
	}
	const n = 200
	p50 := [2]time.Duration{1 << 62, 1 << 62}
	rate := [2]float64{}
	for range reps {
		for i, srv := range srvs {
			t0 := time.Now()
			p := timeIt(n, func() { call(srv) })
			p50[i] = min(p50[i], p)
			rate[i] = max(rate[i], float64(n)/time.Since(t0).Seconds())
		}
	}
	if failed != nil {
		return fmt.Errorf("sandbox row: %w", failed)
	}
	rep.row("| 13 | bash `true` sandboxed (mode auto) vs sandbox off: p50 | 1 | %s | %s | %.2f× | ≤ 1.3× |",
		ms(p50[1]), ms(p50[0]), float64(p50[1])/float64(p50[0]))
	rep.row("| 13 | … calls/s | 1 | %.0f | %.0f | %.2f× | — |", rate[1], rate[0], rate[1]/rate[0])

	box, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		return err
	}
	defer box.Close()
	rep.notes = append(rep.notes, "row 13/14 "+box.Status().String())
	ws := filepath.Join(tmp, "sandbox-setup")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	policy := &sandbox.Policy{Workspace: ws, TempDir: ws, Limits: sandbox.DefaultLimits}
	start := [2]time.Duration{1 << 62, 1 << 62}
	for range reps {
		start[0] = min(start[0], timeIt(n, func() {
			if err := exec.Command("/bin/true").Run(); err != nil && failed == nil {
				failed = err
			}
		}))
		start[1] = min(start[1], timeIt(n, func() {
			p, err := box.Start(exec.Command("/bin/true"), policy)
			if err == nil {
				err = p.Wait()
			}
			if err != nil && failed == nil {
				failed = err
			}
		}))
	}
	if failed != nil {
		return fmt.Errorf("sandbox setup row: %w", failed)
	}
	rep.row("| 14 | sandbox setup alone: /bin/true started in the sandbox vs a plain fork/exec: p50 | 1 | %s | %s | %+.0f µs | — |",
		us(start[1]), us(start[0]), float64((start[1]-start[0]).Nanoseconds())/1e3)
	return nil
}
