package mcpgateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/feature"
)

// A POST's writer writes each kept part where the SDK's encoding has its
// marker, and everything else as it is; the handler finds the writer
// through the header set on the POST, whatever the client sent in it.
func TestWireWriterSplicesParts(t *testing.T) {
	var s wireSlots
	s.init()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set(wireSlotHeader, "forged")
	w, r2, done := s.open(rec, r)
	defer done()
	if r.Header.Get(wireSlotHeader) != "forged" || r2.Header.Get(wireSlotHeader) == "forged" {
		t.Fatalf("slot header: the client's request %q, the SDK's %q", r.Header.Get(wireSlotHeader), r2.Header.Get(wireSlotHeader))
	}
	ww := s.writer(&mcp.ReadResourceRequest{Extra: &mcp.RequestExtra{Header: r2.Header}})
	if ww == nil || ww != w {
		t.Fatal("the handler does not find its POST's writer")
	}
	blob, err := wireContents(ww, feature.Contents{URI: "a", Blob: true, Wire: []byte(`"AAE="`), WireSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := wireContents(ww, feature.Contents{URI: "b", Wire: []byte(`"h\u00e9"`), WireSize: 3})
	event := `data: {"contents":[{"uri":"a","text":"` + blob.Text + `"},{"uri":"b","text":"` + text.Text + `"}],"x":"` + s.marker + `9"}` + "\n\n"
	if _, err := w.Write([]byte(event)); err != nil {
		t.Fatal(err)
	}
	want := `data: {"contents":[{"uri":"a","blob":"AAE="},{"uri":"b","text":"h\u00e9"}],"x":"` + s.marker + `9"}` + "\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if ww.pending() {
		t.Error("parts left after their markers were written")
	}
	if s.writer(&mcp.ReadResourceRequest{Extra: &mcp.RequestExtra{Header: r.Header}}) != nil {
		t.Error("a forged header named a writer")
	}
}

// The SDK's priming event, written first on a POST's stream, gets the
// retry field SEP-1699 asks for; any other write, and a priming event
// that is not first, passes byte for byte.
func TestWireWriterAddsRetryToPrimingEvent(t *testing.T) {
	const prime = "event: prime\nid: 3_0\ndata: \n\n"
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"priming event first", []string{prime, "event: message\nid: 3_1\ndata: {}\n\n"},
			"event: prime\nid: 3_0\nretry: 1000\ndata: \n\n" + "event: message\nid: 3_1\ndata: {}\n\n"},
		{"message first", []string{"event: message\nid: 3_1\ndata: {}\n\n", prime},
			"event: message\nid: 3_1\ndata: {}\n\n" + prime},
		{"priming event with data", []string{"event: prime\nid: 3_0\ndata: x\n\n"}, "event: prime\nid: 3_0\ndata: x\n\n"},
		{"priming event without id", []string{"event: prime\nid: \ndata: \n\n"}, "event: prime\nid: \ndata: \n\n"},
		{"JSON answer", []string{`{"jsonrpc":"2.0","id":1,"result":{}}`}, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s wireSlots
			s.init()
			rec := httptest.NewRecorder()
			w, _, done := s.open(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
			defer done()
			for _, p := range tc.writes {
				if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(p))
				}
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("wrote %q, want %q", got, tc.want)
			}
		})
	}
}

// The event store keeps an answer as its writer writes it: each part in
// place of its marker, also when the POST was answered (cut) before the
// SDK stored it; the writer still writes the parts afterwards.
func TestResumeStoreKeepsParts(t *testing.T) {
	for _, cut := range []bool{false, true} {
		var s wireSlots
		s.init()
		store := newResumeStore(&s, 0)
		rec := httptest.NewRecorder()
		w, r2, done := s.open(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
		ww := s.writer(&mcp.ReadResourceRequest{Extra: &mcp.RequestExtra{Header: r2.Header}})
		part, err := wireContents(ww, feature.Contents{URI: "a", Wire: []byte(`"h\u00e9"`), WireSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		if cut {
			done()
			if again, _ := wireContents(ww, feature.Contents{URI: "b", Wire: []byte(`"x"`), WireSize: 1}); again.Text != "x" {
				t.Errorf("an answered POST's writer took a part: the answer carries %q", again.Text)
			}
		}
		data := `{"contents":[{"uri":"a","text":"` + part.Text + `"}]}`
		ctx := context.Background()
		if err := store.Open(ctx, "s", "1"); err != nil {
			t.Fatal(err)
		}
		if err := store.Append(ctx, "s", "1", []byte(data)); err != nil {
			t.Fatal(err)
		}
		want := `{"contents":[{"uri":"a","text":"h\u00e9"}]}`
		for got, err := range store.After(ctx, "s", "1", -1) {
			if err != nil || string(got) != want {
				t.Errorf("cut %v: stored %q, %v; want %q", cut, got, err, want)
			}
		}
		if !cut {
			if _, err := w.Write([]byte("data: " + data + "\n\n")); err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.String(); got != "data: "+want+"\n\n" {
				t.Errorf("after storing, the writer wrote %q", got)
			}
			done()
		}
	}
}
