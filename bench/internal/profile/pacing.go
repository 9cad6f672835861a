package profile

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
)

// Pace sets the baseline's GOGC from BENCH_GOGC. Not GOGC itself: minproxy
// passes its environment to the MCP child it starts, and the child (the
// same program on both sides of a comparison) must keep Go's default
// pacing.
func Pace() {
	v := os.Getenv("BENCH_GOGC")
	if v == "" {
		return
	}
	p, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile: BENCH_GOGC:", err)
		return
	}
	debug.SetGCPercent(p)
}
