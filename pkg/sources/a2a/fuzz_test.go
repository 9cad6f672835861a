package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// FuzzParseConfig: any input either fails with an error or yields configs
// that marshal and parse back to the same thing (the reload fingerprint
// must be stable).
func FuzzParseConfig(f *testing.F) {
	f.Add(`{"a":{"card":"https://x.test/c","headers":{"A":"${T}"},"timeout":5,"pollEvery":1,"enabled":false}}`)
	f.Add(`{"a":{"card":"http://h/c","disabled":true,"x":1}}`)
	f.Add(`null`)
	f.Add(`{"a":{"card":"https://x.test/c","timeout":1e3}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		got, _, err := a2a.ParseConfig(json.RawMessage(raw))
		if err != nil {
			return
		}
		for id, cfg := range got {
			if cfg.Timeout <= 0 || cfg.PollEvery <= 0 || cfg.Card == "" {
				t.Fatalf("%s: accepted config without defaults: %+v", id, cfg)
			}
			b, err := json.Marshal(map[string]a2a.AgentConfig{id: cfg})
			if err != nil {
				t.Fatal(err)
			}
			again, _, err := a2a.ParseConfig(b)
			if err != nil {
				t.Fatalf("re-parse of %s: %v", b, err)
			}
			b2, _ := json.Marshal(map[string]a2a.AgentConfig{id: again[id]})
			if string(b) != string(b2) {
				t.Fatalf("unstable: %s vs %s", b, b2)
			}
		}
	})
}

// FuzzAgentAnswer: whatever an agent answers a submit with, the call ends
// with a result carrying the pinned metadata keys, never a panic or a hang.
func FuzzAgentAnswer(f *testing.F) {
	f.Add(`{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"x"}]}]}}`)
	f.Add(`{"message":{"role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`)
	f.Add(`{"kind":"task","id":"t","status":{"state":"failed","message":{"parts":[{"kind":"text","text":"no"}]}}}`)
	f.Add(`{"task":{"id":"t","status":{"state":3}}}`)
	f.Add(`[]`)
	f.Add(`{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`)

	var (
		mu     sync.Mutex
		answer json.RawMessage
	)
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("GET /card", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"F","supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"skills":[{"id":"s"}]}`, base+"/rpc")
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Method string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Method != "SendMessage" {
			// Polls and cancels: end the task so the call finishes.
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_CANCELED"}}}`))
			return
		}
		mu.Lock()
		a := answer
		mu.Unlock()
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":`))
		_, _ = w.Write(a)
		_, _ = w.Write([]byte(`}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base = srv.URL
	reg := registry.New()
	src := a2a.New("f", a2a.AgentConfig{Card: srv.URL + "/card", Timeout: 5000, PollEvery: 1}, sources.Env{})
	defer src.Close(context.Background())
	if err := src.Start(context.Background(), reg); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		mu.Lock()
		answer = json.RawMessage(raw)
		mu.Unlock()
		res := testutil.Direct{Reg: reg}.Execute(context.Background(), "F_s", tool.Call{Arguments: json.RawMessage(`{"task":"go"}`)})
		for _, k := range []string{"agent", "taskId", "state", "polls", "ms"} {
			if _, ok := res.Metadata[k]; !ok {
				t.Fatalf("answer %s: result %+v lacks metadata %q", raw, res, k)
			}
		}
	})
}
