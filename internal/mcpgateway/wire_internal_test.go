package mcpgateway

import (
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
