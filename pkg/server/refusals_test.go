package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Each refusal is performed as the attack it stands for, over the real
// gRPC wire, and moves toolnexus_sandbox_refusals_total under the tool's
// source and its reason — once, and nothing else.
func TestSandboxRefusalsCountedByReason(t *testing.T) {
	t.Parallel()
	f := start(t, `{"skills": [], "sessions": {"max": 1, "maxBytes": 1000}, "sandbox": {"limits": {"fileSize": 4096, "cpu": 1000}}}`)
	attacks := []struct {
		what    string
		run     func() (isError bool, output string)
		reason  tool.Refusal
		outputs string
	}{
		{"read ../../etc/passwd", func() (bool, string) {
			r := f.exec(t, "read", `{"path": "../../etc/passwd"}`)
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalPathEscape, "path escapes the workspace"},
		{"webfetch of the server's own loopback /metrics", func() (bool, string) {
			r := f.exec(t, "webfetch", fmt.Sprintf(`{"url": "http://%s/metrics", "format": "text"}`, f.srv.MetricsAddr()))
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalNetworkAddress, "refused to connect to 127.0.0.1"},
		{"bash writing past sandbox.limits.fileSize", func() (bool, string) {
			r := f.exec(t, "bash", `{"command": "head -c 100000 /dev/zero > big"}`)
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalFileSizeLimit, "exited with code 153"},
		{"bash spinning past sandbox.limits.cpu", func() (bool, string) {
			r := f.exec(t, "bash", `{"command": "while :; do :; done"}`)
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalCPULimit, "bash: command exited with code"},
		{"a write past the session's quota", func() (bool, string) {
			r := execIn(t, inSession("", "one"), f.reg, "write", map[string]any{"path": "big", "content": strings.Repeat("x", 1001)})
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalSessionQuota, "quota would be exceeded"},
		{"a second session past sessions.max", func() (bool, string) {
			r := execIn(t, inSession("", "two"), f.reg, "read", map[string]any{"path": "x"})
			return r.GetIsError(), r.GetOutput()
		}, tool.RefusalSessionLimit, "too many sessions"},
	}
	for i, a := range attacks {
		isError, out := a.run()
		if !isError || !strings.Contains(out, a.outputs) {
			t.Fatalf("%s: is_error %v, output %q; want a refusal saying %q", a.what, isError, out, a.outputs)
		}
		body := f.scrape(t)
		for j, b := range attacks {
			want := " 0"
			if j <= i {
				want = " 1"
			}
			line := testutil.MetricLine(body, "toolnexus_sandbox_refusals_total", `source="builtin"`, `reason="`+b.reason.String()+`"`)
			if !strings.HasSuffix(line, want) {
				t.Errorf("after %s: %q, want%s", a.what, line, want)
			}
		}
	}
	// An ordinary failure is no refusal.
	if r := f.exec(t, "bash", `{"command": "exit 3"}`); !r.GetIsError() {
		t.Fatal("exit 3 succeeded")
	}
	for _, r := range tool.Refusals() {
		if line := testutil.MetricLine(f.scrape(t), "toolnexus_sandbox_refusals_total", `source="builtin"`, `reason="`+r.String()+`"`); strings.HasSuffix(line, " 2") {
			t.Errorf("a plain failure counted as a refusal: %q", line)
		}
	}
}
