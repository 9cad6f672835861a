package a2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

func TestCardVariants(t *testing.T) {
	t.Parallel()
	skills := []any{map[string]any{"id": "echo", "description": "Echoes."}}
	cases := []struct {
		name      string
		card      func(base string) any
		wantTools []string
		wantSend  string // the submit method the agent must see
	}{{
		name: "1.0 preferred over an earlier 0.3 interface",
		card: func(base string) any {
			return map[string]any{"name": "Fake Agent", "skills": skills,
				"url": base + "/rpc", "protocolVersion": "0.3",
				"supportedInterfaces": []any{
					map[string]any{"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
					map[string]any{"url": base + "/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
					map[string]any{"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
				}}
		},
		wantTools: []string{"Fake_Agent_echo"},
		wantSend:  "SendMessage",
	}, {
		name: "1.0 with a relative endpoint",
		card: func(string) any {
			return map[string]any{"name": "Fake Agent", "skills": skills,
				"supportedInterfaces": []any{map[string]any{"url": "/rpc", "protocolBinding": "jsonrpc", "protocolVersion": "1.0"}}}
		},
		wantTools: []string{"Fake_Agent_echo"},
		wantSend:  "SendMessage",
	}, {
		name: "0.3 listed only in supportedInterfaces",
		card: func(base string) any {
			return map[string]any{"name": "Fake Agent", "skills": skills,
				"supportedInterfaces": []any{map[string]any{"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.1"}}}
		},
		wantTools: []string{"Fake_Agent_echo"},
		wantSend:  "message/send",
	}, {
		name: "0.3 with JSON-RPC as an additional interface",
		card: func(base string) any {
			return map[string]any{"name": "Fake Agent", "skills": skills,
				"url": base + "/grpc", "protocolVersion": "0.3.0", "preferredTransport": "GRPC",
				"additionalInterfaces": []any{map[string]any{"url": base + "/rpc", "transport": "JSONRPC"}}}
		},
		wantTools: []string{"Fake_Agent_echo"},
		wantSend:  "message/send",
	}, {
		name: "skill names sanitized, name used without id, duplicates and blanks dropped",
		card: func(base string) any {
			return map[string]any{"name": "Fäke Agent/2", "url": base + "/rpc", "protocolVersion": "0.3",
				"skills": []any{
					map[string]any{"name": "Summarize it", "description": "Summarizes."},
					map[string]any{"id": "x.y"},
					map[string]any{"id": "x:y"},
					map[string]any{"description": "nameless"},
				}}
		},
		wantTools: []string{"F_ke_Agent_2_Summarize_it", "F_ke_Agent_2_x_y"},
		wantSend:  "message/send",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent := newFakeAgent(t, "1.0")
			if tc.wantSend == "message/send" {
				agent.proto = "0.3"
			}
			agent.card = tc.card
			s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
			if s.err != nil {
				t.Fatalf("Start: %v", s.err)
			}
			names := toolNames(s.reg)
			if !slices.Equal(names, tc.wantTools) {
				t.Fatalf("tools = %v, want %v", names, tc.wantTools)
			}
			res := execute(context.Background(), s.reg, names[0], "instant")
			if res.IsError {
				t.Fatalf("call: %+v", res)
			}
			if n := len(agent.requestsFor(tc.wantSend)); n != 1 {
				t.Errorf("%d %s requests, want 1", n, tc.wantSend)
			}
		})
	}
}

func TestFailingCards(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }, "is not a JSON agent card"},
		{"no name", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"url":"http://x/rpc"}`)) }, `has no name`},
		{"gRPC only", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"name":"A","supportedInterfaces":[{"url":"http://x","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`))
		}, "offers no JSON-RPC endpoint for A2A protocol 1.0 or 0.3"},
		{"unknown version", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"name":"A","url":"http://x/rpc","protocolVersion":"0.2.5"}`))
		}, "offers no JSON-RPC endpoint"},
		{"bad endpoint", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"name":"A","supportedInterfaces":[{"url":"ftp://x/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`))
		}, "is not an http(s) URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			s := startAgent(t, "broken", agentConfig(srv.URL+"/card.json"), sources.Env{})
			if s.err == nil || !strings.Contains(s.err.Error(), tc.want) {
				t.Fatalf("Start error = %v, want it to contain %q", s.err, tc.want)
			}
			st := s.src.Status()
			if st.State != sources.Failed || st.Error != s.err.Error() {
				t.Errorf("status = %+v, want failed with the Start error", st)
			}
			if n := s.reg.Snapshot().Len(); n != 0 {
				t.Errorf("%d tools published by a failed agent", n)
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		s := startAgent(t, "gone", agentConfig(url+"/card.json"), sources.Env{})
		if s.err == nil || !strings.Contains(s.err.Error(), "fetching agent card") || s.src.Status().State != sources.Failed {
			t.Fatalf("Start error = %v, status %+v", s.err, s.src.Status())
		}
	})
}

func TestStatusBeforeStart(t *testing.T) {
	t.Parallel()
	// A fresh source, never started, is not yet connected.
	fresh := newUnstarted(t, "http://127.0.0.1:1/card.json")
	if st := fresh.Status(); st.State != sources.Restarting {
		t.Errorf("status before Start = %+v, want restarting", st)
	}
}
