package testutil

import (
	"os"
	"path/filepath"
	"strings"
)

// ProcessesWith lists the pids whose command line contains marker: a test
// starts a command with a unique marker in it and finds it, or shows it
// gone, by reading /proc.
func ProcessesWith(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, e.Name())
		}
	}
	return out
}
