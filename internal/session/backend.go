package session

import "time"

// Backend is where a Manager's sessions live: their workspaces, what a
// call running in one holds, their quota figures, their last use, and
// their removal. The Manager keeps the sessions this process serves in a
// lock-free map and asks its Backend only what the map cannot answer, so
// a call in a known session on a local root costs a map lookup, two
// atomics and a call to Hold that does nothing.
//
// Two implementations, chosen by sessions.shared when the Manager is made:
//
//   - local (the default): one replica per root. Everything is in memory;
//     the metadata files only carry the creation time and last use across
//     a restart. A second replica on the same root is not detected.
//   - shared: every replica mounts the root; file locks on the volume keep
//     the running calls, sessions.max, the quota and the idle cleanup exact
//     across replicas (shared.go).
//
// The Manager holds its mutex around Open and Delete and while Sweep
// removes a session, so a Backend never sees two of them for one session
// at once; Hold, Release, Grow and Used run on the call path, concurrently.
// The contract both implementations meet is backend_contract_test.go.
type Backend interface {
	// Open finds or creates the session's workspace, with the caller's
	// call held in it (refs is 1), for a session not in the Manager's
	// map. It refuses with ErrTooMany past sessions.max.
	Open(principal, id string) (*Session, error)
	// Hold holds a call that entered a session from the map (its
	// reference count already raised). errGone: the session was removed
	// elsewhere; the Manager forgets it and opens a fresh one.
	Hold(s *Session) error
	// Release ends a call: it counts it out of s.refs, records the last
	// use and, when the call used the workspace, has it measured.
	Release(s *Session, touched bool)
	// Grow admits n more bytes within limit (> 0, n != 0) or refuses
	// with a quota error for the model.
	Grow(s *Session, n, limit int64) error
	// Used is the bytes the session's workspace uses, as counted.
	Used(s *Session) int64
	// List describes the principal's sessions, or every one when all is
	// set, in any order.
	List(principal string, all bool) []Info
	// Delete removes a session now: ErrNotFound, or ErrBusy while a call
	// runs in it.
	Delete(principal, id string) error
	// Sweep removes the sessions idle for idle at now and records the
	// last use of the others.
	Sweep(now time.Time, idle time.Duration)
	// Close lets go of what the backend holds open; the sessions stay.
	Close()
}
