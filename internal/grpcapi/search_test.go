package grpcapi_test

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// searchTool is a native tool whose description carries words for search.
func searchTool(name, description string) tool.Tool {
	return tool.Must(tool.New(name, func(context.Context, tool.Call) tool.Result { return tool.Result{} },
		tool.WithDescription(description)))
}

// TestSearchScoresIgnoreHiddenTools attacks SearchTools' ranking as a
// restricted token: on one server it can see three tools; on another it
// sees the same three among 400 it cannot, which share its words. Its
// scores must be identical to the last bit (the corpus statistics are
// those of its own view), each hit's reason too, and a word only hidden
// tools carry must find nothing, exactly as a word no tool has.
func TestSearchScoresIgnoreHiddenTools(t *testing.T) {
	t.Parallel()
	const cfg = `{"builtins": false, "auth": {"tokens": [
		{"name": "narrow", "token": "tok-narrow-0123456789abcdef", "tools": ["vis_*"]}]}}`
	visible := []tool.Tool{
		searchTool("vis_send_email", "Send an email message to a recipient."),
		searchTool("vis_read_inbox", "Read the messages of the inbox."),
		searchTool("vis_create_issue", "Open an issue in a repository."),
	}
	var hidden []tool.Tool
	for i := range 400 {
		hidden = append(hidden, searchTool(fmt.Sprintf("hid_message_%d", i),
			"Send a message, an email or a secretword to an inbox of a repository."))
	}
	alone := startFrontWith(t, cfg, "", core.Options{Native: visible})
	among := startFrontWith(t, cfg, "", core.Options{Native: append(visible, hidden...)})
	for _, q := range []string{"send an email", "read my inbox messages", "open an issue in a repository", "secretword", "xylophone"} {
		a := searchAs(t, alone, q)
		b := searchAs(t, among, q)
		if len(a) != len(b) {
			t.Fatalf("%q: %v alone, %v among hidden tools", q, a, b)
		}
		for i := range a {
			if a[i].GetReason() == "" || a[i].GetReason() != b[i].GetReason() {
				t.Errorf("%q #%d: reason %q alone, %q among hidden tools", q, i, a[i].GetReason(), b[i].GetReason())
			}
			if a[i].GetTool().GetName() != b[i].GetTool().GetName() || a[i].GetScore() != b[i].GetScore() {
				t.Errorf("%q #%d: %s %v alone, %s %v among hidden tools", q, i, a[i].GetTool().GetName(), a[i].GetScore(),
					b[i].GetTool().GetName(), b[i].GetScore())
			}
		}
		if (q == "secretword" || q == "xylophone") && len(b) != 0 {
			t.Errorf("%q found %v", q, b)
		}
	}
}

func searchAs(t *testing.T, f *front, query string) []*pb.ScoredTool {
	t.Helper()
	resp, err := f.registry.SearchTools(bearer(t.Context(), "tok-narrow-0123456789abcdef"), &pb.SearchToolsRequest{Query: query, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTools()
}
