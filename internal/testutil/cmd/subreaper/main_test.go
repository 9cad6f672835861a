package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The command's own status passes through when it leaves nothing behind;
// a process it started and left running is named, killed, and fails the
// run.
func TestSubreaperReportsWhatOutlivesTheCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		mentions string
	}{
		{"clean", []string{"--", "true"}, 0, ""},
		{"failing command", []string{"--", "sh", "-c", "exit 3"}, 3, ""},
		{"orphan ends within the grace period", []string{"-grace", "5s", "--", "sh", "-c", "sleep 0.3 &"}, 0, ""},
		{"orphan left running", []string{"-grace", "200ms", "--", "sh", "-c", "sleep 31 & echo started"}, 1, "sleep 31"},
		{"daemonized orphan", []string{"-grace", "200ms", "--", "sh", "-c", "setsid sh -c 'sleep 32' & sleep 0.1"}, 1, "sleep 32"},
		// An orphan that ends while the command still runs is reaped then,
		// as init would: its zombie must not linger (a test waiting for a
		// killed process group to be gone would wait forever).
		{"orphan reaped while the command runs", []string{"--", "sh", "-c",
			`(sleep 0.1 &); sleep 1; cat /proc/[0-9]*/stat 2>/dev/null | awk -v p=$PPID '$3 == "Z" && $4 == p {n++} END {exit n > 0}'`}, 0, ""},
		{"no command", nil, 2, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Files, not buffers: a buffer makes Wait wait for the pipe
			// an orphan still holds, as a file does not.
			out, errOut := tempFile(t), tempFile(t)
			start := time.Now()
			code := run(tc.args, out, errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, read(t, errOut))
			}
			if tc.mentions != "" && !strings.Contains(read(t, errOut), tc.mentions) {
				t.Errorf("stderr does not name %q:\n%s", tc.mentions, read(t, errOut))
			}
			if tc.mentions == "" && read(t, errOut) != "" {
				t.Errorf("unexpected stderr:\n%s", read(t, errOut))
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
	if left := descendants(os.Getpid()); len(left) > 0 {
		t.Errorf("processes left after the runs: %v", left)
	}
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func read(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
