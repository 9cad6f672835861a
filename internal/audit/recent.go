package audit

import "sync/atomic"

// RecentCalls is how many call lines the log keeps in memory for the
// console's /audit page, beside writing them out.
const RecentCalls = 1000

// ring holds the newest call lines without a lock: a writer takes the
// next slot with one atomic add and stores the line it already built for
// the file (no copy, no allocation of its own). A reader walks back from
// the newest slot; under heavy load a slot it reaches may already hold a
// newer line, which only reorders what a person reads.
type ring struct {
	slots [RecentCalls]atomic.Pointer[callLine]
	next  atomic.Uint64
}

func (r *ring) add(line *callLine) {
	i := r.next.Add(1) - 1
	r.slots[i%RecentCalls].Store(line)
}

// Recorded is one call line as a person reads it on the console: what
// the audit file has, except the arguments, which may hold what a caller
// would not show another (only their size is here).
//
// Its fields Method, Protocol, Principal, Session, Tool, Source, CallID,
// Outcome and IsError come from callFacts, as in the file's line.
type Recorded struct {
	Time string
	callFacts
	DurationMS    float64
	ArgumentBytes int
	TraceID       string
}

// Recent returns up to n of the newest call lines this process wrote,
// newest first, that keep accepts (nil keeps all). Nothing is kept while
// the log is off.
func (l *Log) Recent(n int, keep func(*Recorded) bool) []Recorded {
	if l == nil || n <= 0 {
		return nil
	}
	newest := l.recent.next.Load()
	out := make([]Recorded, 0, min(n, RecentCalls))
	for back := uint64(1); back <= min(newest, RecentCalls) && len(out) < n; back++ {
		c := l.recent.slots[(newest-back)%RecentCalls].Load()
		if c == nil {
			continue
		}
		r := Recorded{Time: c.Time, callFacts: c.callFacts, DurationMS: c.DurationMS, ArgumentBytes: c.ArgumentBytes, TraceID: c.TraceID}
		if keep == nil || keep(&r) {
			out = append(out, r)
		}
	}
	return out
}
