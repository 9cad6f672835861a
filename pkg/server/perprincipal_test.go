package server_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// TestBashFloodFromOnePrincipalDoesNotStarveAnother: agent-a floods bash
// with slow commands, more than the tool's whole cap; agent-b's `bash id`
// still runs at once, because agent-a holds at most its own
// maxConcurrencyPerPrincipal slots and the rest queue on agent-a's own
// semaphore. The test knows agent-a's commands are running (not merely
// sent) because each says so through a FIFO the test reads.
func TestBashFloodFromOnePrincipalDoesNotStarveAnother(t *testing.T) {
	const perPrincipal, flood = 2, 6 // as the config says; the tool cap is 4
	s, conn := twoPrincipals(t, `, "limits": {"tools": {"bash": {"maxConcurrency": 4, "maxConcurrencyPerPrincipal": 2}}}`)
	reg := pb.NewRegistryServiceClient(conn)
	if r := execIn(t, bearer(tokB), reg, "bash", map[string]any{"command": "true"}); r.GetIsError() {
		t.Fatal(r.GetOutput()) // makes the shared workspace
	}
	gate := filepath.Join(filepath.Dir(s.cfgPath), "ws", "gate.fifo")
	if err := unix.Mkfifo(gate, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(gate, 0o666); err != nil {
		t.Fatal(err)
	}
	// Held open for reading from the start, so a writer never blocks on
	// the open and no line is lost between reads.
	fifo, err := os.OpenFile(gate, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()

	floodCtx, stopFlood := context.WithCancel(bearer(tokA))
	var wg sync.WaitGroup
	results := make(chan *pb.ToolResult, flood)
	for range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := reg.Execute(floodCtx, &pb.ExecuteRequest{Name: "bash", Input: &pb.ExecuteRequest_ArgumentsJson{
				ArgumentsJson: `{"command": "echo up > gate.fifo; exec sleep 600"}`}})
			if err == nil {
				results <- resp.GetResult()
			}
		}()
	}
	lines := bufio.NewReader(fifo)
	for range perPrincipal {
		if l, err := lines.ReadString('\n'); err != nil || l != "up\n" {
			t.Fatalf("reading the gate: %q %v", l, err)
		}
	}
	// agent-a now runs perPrincipal commands and queues the rest, under
	// a tool cap of 4 < flood: without the per-principal cap its
	// flood would hold every slot.
	bctx, cancel := context.WithTimeout(bearer(tokB), 30*time.Second)
	defer cancel()
	r := execIn(t, bctx, reg, "bash", map[string]any{"command": "id -u"})
	if r.GetIsError() {
		t.Fatalf("agent-b's call waited behind agent-a's flood: %s", r.GetOutput())
	}
	stopFlood()
	wg.Wait()
	close(results)
	for res := range results {
		if !res.GetIsError() {
			t.Errorf("a cancelled flood call succeeded: %v", res)
		}
	}
}
