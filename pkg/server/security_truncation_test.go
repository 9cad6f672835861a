package server_test

import (
	"testing"
)

// TestTruncationTellsTheTruth: bash prints 49,000,000 bytes; the builtin
// keeps limits.maxOutputBytes (1 MiB) of them in memory and the executor
// cuts to the tool's own 100-byte limit. The caller reads one note with
// the true count of bytes it did not get, not the bytes the second cut saw.
func TestTruncationTellsTheTruth(t *testing.T) {
	t.Parallel()
	f := start(t, `{"skills": [], "limits": {"tools": {"bash": {"maxOutputBytes": 100}}}}`)
	r := f.exec(t, "bash", `{"command": "head -c 49000000 /dev/zero | tr '\\0' a"}`)
	want := ""
	for range 100 {
		want += "a"
	}
	want += "\n[output truncated: 48999900 bytes omitted; limits.maxOutputBytes is 100]"
	if r.GetIsError() || r.GetOutput() != want {
		t.Fatalf("output tail %q (is_error %v), want %q", tail(r.GetOutput()), r.GetIsError(), tail(want))
	}
	if r.GetMetadata().GetFields()["truncated"].GetBoolValue() != true {
		t.Fatalf("metadata %v lacks truncated", r.GetMetadata())
	}
}

func tail(s string) string { return s[max(0, len(s)-120):] }
