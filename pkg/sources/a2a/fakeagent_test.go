package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeAgent is a small A2A agent on httptest that speaks either dialect.
// Like testdata/agent.mjs, the task text is a script, so tests need no
// sleeps: a task moves on when it has been polled enough.
//
//	complete after N     completed after N polls, artifacts "alpha" / "beta","gamma"
//	history after N      completed after N polls, no artifacts, an agent message in history
//	fail after N: MSG    failed after N polls with status message MSG
//	cancelstate after N  canceled by the agent after N polls (no message)
//	input after N        input-required after N polls, message "which file?"
//	auth after N         auth-required after N polls, message "sign in first"
//	hang                 working until canceled
//	instant              the submit answer is already completed
//	message              the submit answer is a direct message, no task
//	rpc error            the submit fails with JSON-RPC error "agent exploded"
//	poll error           every poll fails with JSON-RPC error "task vanished"
//	http500 after N      polls after the Nth answer HTTP 500 without a JSON body
//	big                  completed at once with a 100-byte artifact
//	echoauth             the submit fails with an error that echoes the Authorization header
//	echoresult           completed at once with an artifact that echoes the Authorization header
type fakeAgent struct {
	t     testing.TB
	proto string // "1.0" or "0.3"
	srv   *httptest.Server
	card  func(base string) any // the card served; default per proto

	mu       sync.Mutex
	submits  int
	gets     map[string]int
	cancels  []string
	requests []fakeRequest
	tasks    map[string]*fakeTask
	nextID   int
	// onPoll runs (without the lock) before a poll is answered.
	onPoll func(id string, n int)
	// hold makes every poll wait until the client gives up on it, so a
	// timeout always lands while a poll is in flight.
	hold bool
}

type fakeRequest struct {
	Method string
	Header http.Header
	Params json.RawMessage
}

type fakeTask struct {
	id     string
	script string
	n      int
	msg    string
	state  string // 0.3 spelling
}

func newFakeAgent(t testing.TB, proto string) *fakeAgent {
	t.Helper()
	a := &fakeAgent{t: t, proto: proto, gets: map[string]int{}, tasks: map[string]*fakeTask{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", a.serveCard)
	mux.HandleFunc("POST /rpc", a.serveRPC)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAgent) cardURL() string { return a.srv.URL + "/.well-known/agent-card.json" }

func (a *fakeAgent) serveCard(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, fakeRequest{Method: "card", Header: r.Header.Clone()})
	card := a.card
	a.mu.Unlock()
	var body any
	switch {
	case card != nil:
		body = card(a.srv.URL)
	case a.proto == "1.0":
		body = map[string]any{
			"name": "Fake Agent", "description": "A fake agent.", "version": "1",
			"supportedInterfaces": []any{map[string]any{"url": a.srv.URL + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
			"skills": []any{
				map[string]any{"id": "echo", "name": "Echo", "description": "Echoes."},
				map[string]any{"id": "review.code", "name": "Review code", "description": "Reviews code."},
			},
		}
	default:
		body = map[string]any{
			"name": "Fake Agent", "description": "A fake agent.", "version": "1",
			"url": a.srv.URL + "/rpc", "protocolVersion": "0.3.0",
			"skills": []any{
				map[string]any{"id": "echo", "name": "Echo", "description": "Echoes."},
				map[string]any{"id": "review.code", "name": "Review code", "description": "Reviews code."},
			},
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

var scriptRe = regexp.MustCompile(`^(\w+(?: error)?)(?: after (\d+))?(?:: (.*))?$`)

func (a *fakeAgent) serveRPC(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.requests = append(a.requests, fakeRequest{Method: req.Method, Header: r.Header.Clone(), Params: req.Params})
	a.mu.Unlock()

	rw := rpcWriter{w: w, id: req.ID}
	send, get, cancel := "message/send", "tasks/get", "tasks/cancel"
	if a.proto == "1.0" {
		send, get, cancel = "SendMessage", "GetTask", "CancelTask"
	}
	switch req.Method {
	case send:
		a.rpcSend(rw, r, req.Params)
	case get:
		a.rpcGet(rw, r, req.Params)
	case cancel:
		a.rpcCancel(rw, req.Params)
	default:
		rw.rpcErr(-32601, "Method not found: "+req.Method)
	}
}

// rpcWriter answers one JSON-RPC request of the fake agent.
type rpcWriter struct {
	w  http.ResponseWriter
	id json.RawMessage
}

func (rw rpcWriter) reply(result any) {
	rw.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw.w).Encode(map[string]any{"jsonrpc": "2.0", "id": rw.id, "result": result})
}

func (rw rpcWriter) rpcErr(code int, msg string) {
	rw.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw.w).Encode(map[string]any{"jsonrpc": "2.0", "id": rw.id, "error": map[string]any{"code": code, "message": msg}})
}

// rpcSend submits a task whose text is its script (scriptRe).
func (a *fakeAgent) rpcSend(rw rpcWriter, r *http.Request, params json.RawMessage) {
	text := a.submittedText(params)
	a.mu.Lock()
	a.submits++
	a.nextID++
	ft := &fakeTask{id: "task-" + strconv.Itoa(a.nextID), state: "working"}
	if m := scriptRe.FindStringSubmatch(text); m != nil {
		ft.script, ft.msg = m[1], m[3]
		ft.n, _ = strconv.Atoi(m[2])
	}
	a.tasks[ft.id] = ft
	a.mu.Unlock()
	switch ft.script {
	case "rpc error":
		rw.rpcErr(-32603, "agent exploded")
		return
	case "echoauth":
		rw.rpcErr(-32000, "rejected credentials: "+r.Header.Get("Authorization"))
		return
	case "message":
		msg := a.agentMessage("direct answer")
		if a.proto == "1.0" {
			rw.reply(map[string]any{"message": msg})
		} else {
			rw.reply(msg)
		}
		return
	case "instant", "big", "echoresult":
		a.mu.Lock()
		ft.state = "completed"
		if ft.script == "echoresult" {
			ft.msg = "your credentials: " + r.Header.Get("Authorization")
		}
		a.mu.Unlock()
	}
	t := a.render(ft)
	if a.proto == "1.0" {
		rw.reply(map[string]any{"task": t})
	} else {
		rw.reply(t)
	}
}

// rpcGet polls a task, moving its script on once it was polled n times.
func (a *fakeAgent) rpcGet(rw rpcWriter, r *http.Request, params json.RawMessage) {
	var p struct{ ID string }
	_ = json.Unmarshal(params, &p)
	a.mu.Lock()
	a.gets[p.ID]++
	n := a.gets[p.ID]
	ft := a.tasks[p.ID]
	hook, hold := a.onPoll, a.hold
	a.mu.Unlock()
	if hook != nil {
		hook(p.ID, n)
	}
	if hold {
		<-r.Context().Done()
		return
	}
	if ft == nil {
		rw.rpcErr(-32001, "Task not found: "+p.ID)
		return
	}
	a.mu.Lock()
	if ft.state == "working" && ft.n > 0 && n >= ft.n {
		switch ft.script {
		case "complete", "history":
			ft.state = "completed"
		case "fail":
			ft.state = "failed"
		case "cancelstate":
			ft.state = "canceled"
		case "input":
			ft.state, ft.msg = "input-required", "which file?"
		case "auth":
			ft.state, ft.msg = "auth-required", "sign in first"
		}
	}
	script := ft.script
	a.mu.Unlock()
	switch {
	case script == "poll error":
		rw.rpcErr(-32001, "task vanished")
		return
	case script == "http500" && n > ft.n:
		http.Error(rw.w, "upstream down", http.StatusInternalServerError)
		return
	}
	rw.reply(a.render(ft))
}

// rpcCancel cancels a task.
func (a *fakeAgent) rpcCancel(rw rpcWriter, params json.RawMessage) {
	var p struct{ ID string }
	_ = json.Unmarshal(params, &p)
	a.mu.Lock()
	a.cancels = append(a.cancels, p.ID)
	ft := a.tasks[p.ID]
	if ft != nil {
		ft.state = "canceled"
	}
	a.mu.Unlock()
	if ft == nil {
		rw.rpcErr(-32001, "Task not found: "+p.ID)
		return
	}
	rw.reply(a.render(ft))
}

// submittedText pulls the task text out of either dialect's submit params.
func (a *fakeAgent) submittedText(params json.RawMessage) string {
	var p struct {
		Message struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	}
	_ = json.Unmarshal(params, &p)
	var b strings.Builder
	for _, part := range p.Message.Parts {
		b.WriteString(part.Text)
	}
	return b.String()
}

func (a *fakeAgent) textPart(s string) map[string]any {
	if a.proto == "1.0" {
		return map[string]any{"text": s}
	}
	return map[string]any{"kind": "text", "text": s}
}

func (a *fakeAgent) agentMessage(s string) map[string]any {
	m := map[string]any{"messageId": "m-agent", "parts": []any{a.textPart(s)}}
	if a.proto == "1.0" {
		m["role"] = "ROLE_AGENT"
	} else {
		m["kind"], m["role"] = "message", "agent"
	}
	return m
}

// render writes the task in the agent's dialect.
func (a *fakeAgent) render(ft *fakeTask) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	state := ft.state
	if a.proto == "1.0" {
		state = "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(state, "-", "_"))
	}
	status := map[string]any{"state": state}
	t := map[string]any{"id": ft.id, "contextId": "ctx-1", "status": status}
	if a.proto == "0.3" {
		t["kind"] = "task"
	}
	switch {
	case ft.state == "completed" && ft.script == "history":
		t["history"] = []any{map[string]any{"role": map[bool]string{true: "ROLE_USER", false: "user"}[a.proto == "1.0"], "parts": []any{a.textPart("the question")}},
			a.agentMessage("older answer"), a.agentMessage("from history")}
	case ft.state == "completed" && ft.script == "echoresult":
		t["artifacts"] = []any{map[string]any{"artifactId": "a1", "parts": []any{a.textPart(ft.msg)}}}
	case ft.state == "completed" && ft.script == "big":
		t["artifacts"] = []any{map[string]any{"artifactId": "a1", "parts": []any{a.textPart(strings.Repeat("é", 50))}}}
	case ft.state == "completed":
		t["artifacts"] = []any{
			map[string]any{"artifactId": "a1", "parts": []any{a.textPart("alpha")}},
			map[string]any{"artifactId": "a2", "parts": []any{a.textPart("beta"), map[string]any{"data": map[string]any{"x": 1}}, a.textPart("gamma")}},
		}
		status["message"] = a.agentMessage("status says done")
	case ft.state == "failed" || ft.state == "input-required" || ft.state == "auth-required":
		if ft.msg != "" {
			status["message"] = a.agentMessage(ft.msg)
		}
	}
	return t
}

// snapshot returns copies of the counters for assertions.
func (a *fakeAgent) snapshot() (submits int, gets map[string]int, cancels []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	gets = make(map[string]int, len(a.gets))
	for k, v := range a.gets {
		gets[k] = v
	}
	return a.submits, gets, append([]string(nil), a.cancels...)
}

func (a *fakeAgent) requestsFor(method string) []fakeRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []fakeRequest
	for _, r := range a.requests {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func (a *fakeAgent) setOnPoll(fn func(id string, n int)) {
	a.mu.Lock()
	a.onPoll = fn
	a.mu.Unlock()
}
