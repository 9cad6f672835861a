package codemode

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRunStart is one run_code of `return 1`: a child process
// started, the script interpreted, the answer read. BenchmarkExecTrue is
// the floor in the same run: fork and exec of /bin/true.
func BenchmarkRunStart(b *testing.B) {
	for b.Loop() {
		if r := Run(context.Background(), "return 1", testLimits(), echo); r.Error != "" {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkRunThreeCalls adds three inner calls (answered in process).
func BenchmarkRunThreeCalls(b *testing.B) {
	for b.Loop() {
		if r := Run(context.Background(), "tools.a({}); tools.b({}); return tools.c({})", testLimits(), echo); r.Error != "" {
			b.Fatal(r.Error)
		}
	}
}

func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
