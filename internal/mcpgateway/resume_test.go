package mcpgateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// rawSession speaks MCP 2025-11-25 to /mcp by hand, to cut a POST's event
// stream where a test wants and resume it with Last-Event-ID.
type rawSession struct {
	t              *testing.T
	url, token, id string
	version        string // the MCP-Protocol-Version header after initialize
}

func openRaw(t *testing.T, url, token string) *rawSession {
	t.Helper()
	return openRawAt(t, url, token, "2025-11-25")
}

// openRawAt initializes a session at version.
func openRawAt(t *testing.T, url, token, version string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, token: token, version: version}
	resp := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: status %d, no session id", resp.StatusCode)
	}
	resp = s.do(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	resp.Body.Close()
	t.Cleanup(func() { s.do(http.MethodDelete, "", "").Body.Close() })
	return s
}

// do sends a request in the session (none before initialize answered).
func (s *rawSession) do(method, body, lastEventID string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", cmpOr(s.version, "2025-11-25"))
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// read POSTs resources/read of uri and returns its open event stream.
func (s *rawSession) read(uri string) (*http.Response, *bufio.Reader) {
	s.t.Helper()
	q, _ := json.Marshal(uri)
	resp := s.do(http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":`+string(q)+`}}`, "")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		s.t.Fatalf("read %s: status %d, %s", uri, resp.StatusCode, ct)
	}
	return resp, bufio.NewReader(resp.Body)
}

// resume GETs the events after lastEventID: its status and events. Until
// the gateway sees a POST's stream end, the stream is still taken (409): a
// client retries after the priming event's retry, this one sooner (a bound,
// not a timing assertion).
func (s *rawSession) resume(lastEventID string) (int, []sseEvent, string) {
	s.t.Helper()
	resp := s.do(http.MethodGet, "", lastEventID)
	for range 500 {
		if resp.StatusCode != http.StatusConflict {
			break
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
		resp = s.do(http.MethodGet, "", lastEventID)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body) // a replay of a finished stream ends
	var evs []sseEvent
	r := bufio.NewReader(bytes.NewReader(body))
	for {
		ev, ok := readEvent(r)
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	return resp.StatusCode, evs, string(body)
}

type sseEvent struct{ name, id, retry, data string }

// readEvent reads one event (comments skipped); false at the stream's end.
func readEvent(r *bufio.Reader) (sseEvent, bool) {
	var ev sseEvent
	seen := false
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimSuffix(line, "\n")
		if err != nil {
			return ev, false
		}
		if line == "" {
			if seen {
				return ev, true
			}
			continue
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "event":
			ev.name = value
		case "id":
			ev.id = value
		case "retry":
			ev.retry = value
		case "data":
			ev.data = value
		default:
			continue
		}
		seen = true
	}
}

// partMember is the text or blob member of the only part of a read's
// answer, as sent.
func partMember(t *testing.T, data string) []byte {
	t.Helper()
	var msg struct {
		Result *wireAnswer `json:"result"`
	}
	if err := json.Unmarshal([]byte(data), &msg); err != nil || msg.Result == nil || len(msg.Result.Contents) != 1 {
		t.Fatalf("not a read's answer: %.200s (%v)", data, err)
	}
	if b := msg.Result.Contents[0]["blob"]; b != nil {
		return b
	}
	return msg.Result.Contents[0]["text"]
}

// resumeFixture is a gateway over alpha (a big blob) and a beta whose
// text is spelled with escapes no encoder writes, so only the bytes as
// sent match; want is each URI's member as its server sent it.
func resumeFixture(t *testing.T, opts mcpgateway.Options, big int) (*featureFixture, map[string][]byte) {
	t.Helper()
	beta := hostileUpstream(t, map[string]string{`"shared from beta"`: `"shared\u0020from\u0020beta"`})
	alpha := testutil.StartFeatureUpstream(t, "alpha", testutil.FeatureUpstreamOptions{Big: big})
	f := startFixtureOverWith(t, alpha, beta, "", opts)
	want := map[string][]byte{"file:///shared.txt": []byte(`"shared\u0020from\u0020beta"`)}
	if big > 0 {
		_, sent := readDirect(t, alpha.URL, "file:///big.bin", "2025-11-25")
		want["file:///big.bin"] = sent.answer(t).Contents[0]["blob"]
	}
	return f, want
}

// TestResumeReplaysPartsAsSent: a 2025-11-25 client's read stream starts
// with a priming event carrying an id and retry: 1000; a client that says
// it got only that event resumes with its id and gets the answer again,
// the parts the MCP server's bytes exactly as live (never the gateway's
// marker); one that resumes after the answer gets nothing more; one whose
// stream is cut right after the priming event gets the answer on resuming.
func TestResumeReplaysPartsAsSent(t *testing.T) {
	t.Parallel()
	f, want := resumeFixture(t, mcpgateway.Options{}, 200<<10)
	a := openRaw(t, f.url, fullToken)
	for uri, member := range want {
		resp, r := a.read(uri)
		prime, ok1 := readEvent(r)
		live, ok2 := readEvent(r)
		resp.Body.Close()
		if !ok1 || !ok2 || prime.name != "prime" || prime.id == "" || prime.retry != "1000" || prime.data != "" || live.name != "message" {
			t.Fatalf("read %s: events %+v, %.100v; want a priming event with id and retry: 1000, then the answer", uri, prime, live)
		}
		if got := partMember(t, live.data); !bytes.Equal(got, member) {
			t.Errorf("read %s live: %.80s, the server sent %.80s", uri, got, member)
		}
		status, evs, body := a.resume(prime.id)
		if status != http.StatusOK || len(evs) != 1 || evs[0].id != live.id || evs[0].data != live.data {
			t.Errorf("resume %s after the priming event: status %d, %d events (%.200s); want the answer as sent live", uri, status, len(evs), body)
		}
		if strings.Contains(body, "toolnexus-wire-") {
			t.Errorf("resume %s replayed a marker: %.300s", uri, body)
		}
		if status, evs, _ := a.resume(live.id); status != http.StatusOK || len(evs) != 0 {
			t.Errorf("resume %s after the answer: status %d, %d events; want nothing more", uri, status, len(evs))
		}

		resp, r = a.read(uri) // cut right after the priming event
		prime, _ = readEvent(r)
		resp.Body.Close()
		status, evs, body = a.resume(prime.id)
		if status != http.StatusOK || len(evs) != 1 || strings.Contains(body, "toolnexus-wire-") {
			t.Fatalf("resume %s of a cut stream: status %d, %.300s", uri, status, body)
		}
		var got, sent any
		if json.Unmarshal(partMember(t, evs[0].data), &got) != nil || json.Unmarshal(member, &sent) != nil || got != sent {
			t.Errorf("resume %s of a cut stream: %.80s, the server sent %.80s", uri, partMember(t, evs[0].data), member)
		}
	}
}

// TestAttackResumeSomeoneElsesStream: Bob replays the Last-Event-ID of
// Alice's stream, in his own session, in Alice's session under his token,
// and in another session of Alice's token; and guesses ids of streams in
// Alice's session. None gets Alice's answer.
func TestAttackResumeSomeoneElsesStream(t *testing.T) {
	t.Parallel()
	f, _ := resumeFixture(t, mcpgateway.Options{}, 0)
	alice := openRaw(t, f.url, fullToken)
	resp, r := alice.read("file:///shared.txt")
	prime, _ := readEvent(r)
	if live, _ := readEvent(r); !strings.Contains(live.data, "shared") {
		t.Fatalf("Alice's read: %+v", live)
	}
	resp.Body.Close()

	bob := openRaw(t, f.url, restrictedToken)
	inAlices := &rawSession{t: t, url: f.url, token: restrictedToken, id: alice.id}
	other := openRaw(t, f.url, fullToken)
	stream, _, _ := strings.Cut(prime.id, "_")
	for name, try := range map[string]struct {
		s  *rawSession
		id string
	}{
		"Bob in his session":                  {bob, prime.id},
		"Bob in Alice's session":              {inAlices, prime.id},
		"another session of Alice's token":    {other, prime.id},
		"Bob, a stream id before Alice's":     {bob, "0_0"},
		"Alice's session, a stream not begun": {inAlices, stream + "9_0"},
		"Bob, an index below the first":       {bob, stream + "_-1"},
	} {
		status, evs, body := try.s.resume(try.id)
		if strings.Contains(body, "shared") || len(evs) != 0 {
			t.Errorf("%s resuming %s: status %d, got %.200s", name, try.id, status, body)
		}
		if status == http.StatusOK {
			t.Errorf("%s resuming %s: status 200, want refused", name, try.id)
		}
	}
	if status, evs, _ := alice.resume(prime.id); status != http.StatusOK || len(evs) != 1 {
		t.Errorf("Alice resuming her own stream after the attempts: status %d, %d events", status, len(evs))
	}
}

// TestResumeStoreStaysWithinItsBound: a client reading one answer after
// another keeps no more than the bound plus the answer being stored (the
// store purges before it adds): the oldest streams' events are purged
// (resuming them is refused, 400) and the newest is still resumable.
func TestResumeStoreStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10 // an answer of the 40 KiB blob is ~54 KiB: two exceed it
	f, _ := resumeFixture(t, mcpgateway.Options{EventStoreBytes: bound}, 40<<10)
	a := openRaw(t, f.url, fullToken)
	var primes []string
	for range 8 {
		resp, r := a.read("file:///big.bin")
		prime, _ := readEvent(r)
		if _, ok := readEvent(r); !ok {
			t.Fatal("no answer")
		}
		resp.Body.Close()
		primes = append(primes, prime.id)
	}
	kept := 0
	for i, id := range primes {
		status, evs, body := a.resume(id)
		switch {
		case status == http.StatusOK && len(evs) == 1:
			kept++
		case status != http.StatusBadRequest || len(evs) != 0:
			t.Errorf("resume of read %d: status %d, %.100s; want the answer or purged (400)", i+1, status, body)
		case i == len(primes)-1:
			t.Errorf("the newest read was purged")
		}
	}
	if kept > 2 {
		t.Errorf("%d answers of ~54 KiB resumable: the store holds more than its %d bytes and the newest answer", kept, bound)
	}
}

// TestResumePrimesBySessionVersion: a POST of a 2025-11-25 session that
// names an older MCP-Protocol-Version (as the conformance suite does) is
// primed like its session's; a session initialized at 2025-06-18 gets no
// priming event, whatever version a POST names.
func TestResumePrimesBySessionVersion(t *testing.T) {
	t.Parallel()
	f, _ := resumeFixture(t, mcpgateway.Options{}, 0)
	for _, tc := range []struct {
		session, header string
		primed          bool
	}{
		{"2025-11-25", "2025-03-26", true},
		{"2025-11-25", "2025-11-25", true},
		{"2025-06-18", "2025-06-18", false},
		{"2025-06-18", "2025-03-26", false},
	} {
		s := openRawAt(t, f.url, fullToken, tc.session)
		s.version = tc.header
		resp, r := s.read("file:///shared.txt")
		first, _ := readEvent(r)
		resp.Body.Close()
		if primed := first.name == "prime" && first.retry == "1000"; primed != tc.primed {
			t.Errorf("session %s, POST naming %s: first event %+v, want primed %v", tc.session, tc.header, first, tc.primed)
		}
	}
}
