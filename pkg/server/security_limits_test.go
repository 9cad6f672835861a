package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestWatchStreamsArePerPrincipalCapped is the stream-flood attack: one
// token opens WatchTools streams until the server refuses with
// RESOURCE_EXHAUSTED naming the key; another token is not affected, and a
// closed stream frees its slot.
func TestWatchStreamsArePerPrincipalCapped(t *testing.T) {
	t.Setenv("TN_SEC_AGENT", agentSecret)
	t.Setenv("TN_SEC_ADMIN", adminSecret)
	s := serve(t, `{"debug": true, "builtins": false, "skills": [], "server": {"limits": {"watchStreams": 3}}, "auth": {"tokens": [
		{"name": "agent", "token": "${TN_SEC_AGENT}"}, {"name": "ops", "token": "${TN_SEC_ADMIN}", "admin": true}]}}`, nil)
	reg := pb.NewRegistryServiceClient(s.dial(t))
	open := func(tok string) (context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(bearer(tok))
		st, err := reg.WatchTools(ctx, &pb.WatchToolsRequest{})
		if err == nil {
			_, err = st.Recv() // the first message, or the refusal
		}
		if err != nil {
			cancel()
		}
		return cancel, err
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := open(agentSecret)
		if err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
		cancels = append(cancels, c)
	}
	_, err := open(agentSecret)
	want := `too many open WatchTools streams for token "agent": at most 3 (server.limits.watchStreams); close one before opening another`
	if status.Code(err) != codes.ResourceExhausted || status.Convert(err).Message() != want {
		t.Fatalf("4th stream: %v\nwant RESOURCE_EXHAUSTED: %s", err, want)
	}
	c, err := open(adminSecret)
	if err != nil {
		t.Fatalf("another token's stream: %v", err)
	}
	cancels = append(cancels, c)
	// Closing one frees its slot once the server has seen the stream end.
	cancels[0]()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := open(agentSecret)
		if err == nil {
			cancels = append(cancels, c)
			break
		}
		if status.Code(err) != codes.ResourceExhausted || time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSilentConnectionsAreClosed: a client that connects to the gRPC or
// the metrics port and never says anything is disconnected (gRPC after its
// handshake timeout, HTTP after its header timeout) instead of holding a
// connection and a goroutine forever.
func TestSilentConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	s := serve(t, debugOnly, func(o *server.Options) { o.MCPListen = "127.0.0.1:0" })
	var wg sync.WaitGroup
	for name, addr := range map[string]string{"grpc": s.srv.Addr().String(), "metrics": s.srv.MetricsAddr().String(), "mcp": s.srv.MCPAddr().String()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second)) // bounds a failing test only
			_, err = io.Copy(io.Discard, c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Errorf("%s: a silent connection was still open after 60 s", name)
			}
		}()
	}
	wg.Wait()
}
