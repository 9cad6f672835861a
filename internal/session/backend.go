package session

import (
	"log/slog"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Backend is where sessions live: the ones this process has open (a
// table of its own: a lock-free map, the per-principal counts the cap and
// the gauges read) and their files. The Manager in front of it keeps only
// what is the same for both (the limits, the janitor, the leases, the
// metrics) and never touches a backend's state.
//
// Two implementations, chosen by sessions.shared when the Manager is made;
// package sessiontest holds the contract both pass:
//
//   - NewLocalBackend (the default): one replica per root. Everything is
//     in memory; the metadata files only carry the creation time and last
//     use across a restart. A second replica on the same root is not
//     detected.
//   - NewSharedBackend: every replica mounts the root; file locks on the
//     volume keep the running calls, sessions.max, the quota and the idle
//     cleanup exact across replicas (shared.go).
//
// The lock rule. A call in a session this process has open takes no lock:
// a map read and an atomic count, then (on a shared root) the session's
// file lock once per replica. Making, deleting and expiring a session are
// ordered per session, by its state (opening, open, being removed: see
// table.go), never by a lock held across the volume's I/O: a slow mkdir,
// flock, stat or rename of one session holds up no call, creation or
// removal of another. A backend's one mutex guards its per-principal
// counts, and nothing touches the volume while it is held
// (TestSlowVolumeHoldsUpNoOtherSession).
type Backend interface {
	// Acquire enters session id of principal with one call, making its
	// workspace on first use; ErrTooMany past sessions.max.
	Acquire(principal, id string) (*Session, error)
	// Release ends a call Acquire entered: it records the last use and,
	// when the call used the workspace (touched), has it measured.
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
	// Stats is how many sessions this process has open and the bytes
	// they use, kept as they change: reading it walks nothing.
	Stats() (sessions, bytes int64)
	// Close lets go of what the backend holds open; the sessions stay.
	Close()
}

// Env is what a Backend is given by its Manager.
type Env struct {
	// Root is the sessions' directory: absolute, symlinks resolved,
	// existing.
	Root string
	// Limits is the sessions section in force.
	Limits func() config.Sessions
	// Now is the clock.
	Now func() time.Time
	// Logger hears the deletions.
	Logger *slog.Logger
	// OnDelete hears every deleted session, after its workspace is gone.
	OnDelete func(info Info, reason string)
	// Dropped hears every error no caller is told of (a release's
	// bookkeeping, a sweep's removal, a last use not recorded): the
	// Manager logs it and counts it in toolnexus_session_errors_total{op}.
	Dropped func(op string, err error)
}

// The ops Env.Dropped names.
const (
	OpRelease = "release" // recording a call's end on the volume
	OpSweep   = "sweep"   // looking for idle sessions, removing one
	OpPersist = "persist" // recording a session's last use
	OpRemove  = "remove"  // deleting a removed session's files
	OpClose   = "close"   // letting go of a session's files
)

func (e Env) dropped(op string, err error) {
	if err != nil && e.Dropped != nil {
		e.Dropped(op, err)
	}
}
