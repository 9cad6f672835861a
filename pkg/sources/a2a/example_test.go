package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A minimal A2A 1.0 agent answers at once; the source turns its one skill
// into a tool and runs a task through it.
func Example() {
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"name":"Translator","supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
			"skills":[{"id":"to-french","name":"To French","description":"Translates English text to French."}]}`, base+"/rpc")
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},
			"artifacts":[{"artifactId":"a","parts":[{"text":"Bonjour le monde"}]}]}}}`, req.ID)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	base = srv.URL

	agents, _, err := a2a.ParseConfig(json.RawMessage(`{"translator": {"card": "` + srv.URL + `/.well-known/agent-card.json"}}`))
	if err != nil {
		panic(err)
	}
	reg := registry.New()
	src := a2a.New("translator", agents["translator"], sources.Env{})
	defer src.Close(context.Background())
	if err := src.Start(context.Background(), reg); err != nil {
		panic(err)
	}
	for _, e := range reg.Snapshot().Entries() {
		fmt.Println(e.Tool.Name, "-", e.Tool.Description)
	}
	e, _ := reg.Snapshot().Lookup("Translator_to-french")
	res := e.Tool.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"task":"Hello world"}`)})
	fmt.Println(res.Output, res.Metadata["state"], res.Metadata["polls"])
	// Output:
	// Translator_to-french - Translates English text to French.
	// Bonjour le monde completed 0
}
