package testutil

import "strings"

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
