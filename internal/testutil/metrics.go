package testutil

import (
	"strings"
	"testing"
	"time"
)

// MetricLine finds the sample line of metric name, in Prometheus text,
// that has all the given label pairs; "" when there is none.
func MetricLine(body, name string, labels ...string) string {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(line, l) {
				ok = false
				break
			}
		}
		if ok {
			return line
		}
	}
	return ""
}

// WaitInFlight waits until a gRPC call of source is running, as the
// in-flight gauge scrape returns reports it. It polls an observable
// condition (bounded), for tests whose tool is a real source's and cannot
// signal by itself.
func WaitInFlight(t testing.TB, scrape func() string, source string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if line := MetricLine(scrape(), "toolnexus_tool_calls_in_flight", `source="`+source+`"`, `protocol="grpc"`); strings.HasSuffix(line, " 1") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("call never became in-flight")
}
