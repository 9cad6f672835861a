package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// streamRows measures streaming (rows 15–16): ExecuteStream against unary
// Execute on the same tool, and how long a line bash writes takes to reach
// the client.
func streamRows(rep *report, full *running, tmp string, d time.Duration, reps int) error {
	streamCall := func(ctx context.Context) error {
		s, err := full.client.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: payload}})
		if err != nil {
			return err
		}
		var res *pb.ToolResult
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if r := ev.GetResult(); r != nil {
				res = r
			}
		}
		if res == nil || res.GetIsError() {
			return fmt.Errorf("stream without a good result: %v", res)
		}
		return nil
	}
	execReq := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: payload}}
	execCall := func(ctx context.Context) error {
		resp, err := full.client.Execute(ctx, execReq)
		if err == nil && resp.GetResult().GetIsError() {
			return fmt.Errorf("tool error: %s", resp.GetResult().GetOutput())
		}
		return err
	}
	for _, conc := range []int{1, 16} {
		a, b := pair(reps, conc, d, streamCall, execCall)
		checkErrors(rep, "ExecuteStream", a)
		rep.row("| 15 | ExecuteStream (debug_echo) vs Execute: calls/s | %d | %.0f | %.0f | %.2f× | ≥ 0.9× |", conc, a.perSecond(), b.perSecond(), a.perSecond()/b.perSecond())
	}

	// bash prints the wall-clock time (ns) and sleeps, 200 times; the
	// client subtracts each line's time from its own clock on arrival.
	dir := filepath.Join(tmp, "stream")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	srv, err := startServer(dir, `{"debug": false, "builtins": true, "skills": []}`, false)
	if err != nil {
		return err
	}
	defer srv.stop()
	const lines = 200
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := srv.client.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "bash", Input: &pb.ExecuteRequest_ArgumentsJson{
		ArgumentsJson: fmt.Sprintf(`{"command": "for i in $(seq %d); do date +%%s%%N; sleep 0.01; done"}`, lines)}})
	if err != nil {
		return err
	}
	var lat []time.Duration
	var pending []byte
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		out := ev.GetOutput()
		if out == nil {
			continue
		}
		now := time.Now()
		pending = append(pending, out.GetData()...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			ns, err := strconv.ParseInt(string(pending[:i]), 10, 64)
			pending = pending[i+1:]
			if err != nil {
				return fmt.Errorf("bash line: %w", err)
			}
			lat = append(lat, now.Sub(time.Unix(0, ns)))
		}
	}
	if len(lat) != lines {
		return fmt.Errorf("bash streamed %d lines, want %d", len(lat), lines)
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	rep.row("| 16 | bash line written → client receives the output event (%d lines): p50 | 1 | %s | — | — | ≤ 10 ms |", lines, ms(p50))
	rep.row("| 16 | … p99 | 1 | %s | — | — | — |", ms(p99))
	return nil
}

// runStream runs rows 15–16 alone and prints them.
func runStream(d time.Duration, reps int) error {
	tmp, err := os.MkdirTemp("", "toolnexus-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	full, err := startServer(tmp, `{"debug": true, "builtins": false}`, false)
	if err != nil {
		return err
	}
	defer full.stop()
	rep := &report{}
	if err := streamRows(rep, full, tmp, d, reps); err != nil {
		return err
	}
	for _, n := range rep.notes {
		fmt.Println(n)
	}
	return nil
}
