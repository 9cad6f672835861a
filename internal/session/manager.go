// Package session gives each agent session a workspace of its own: a
// directory per (principal, session id) under the workspace root, created on
// the session's first call, bounded by a disk quota, and deleted once the
// session has been idle for sessions.idleTimeout — never while a call in it
// runs.
//
// Layout under the root (sessions.root, by default <workspace>.sessions
// beside the workspace, never inside it):
//
//	<principal>/<id>/     the session's workspace (what its calls see)
//	.meta/<principal>/<id> its creation time; the file's mtime is the last use
//	.trash/                deleted workspaces on their way out
//
// <principal> is "anonymous" without auth, else "u-" and the escaped token
// name, so two tokens using the same session id get two directories. A
// restart finds the directories again and resumes each session's idle
// clock from its metadata.
//
// A call in an existing session takes no lock: a lookup in a sync.Map and
// an atomic reference count. Where the sessions live is a Backend
// (backend.go), which owns them and orders their making and removal per
// session, never holding a lock across the volume's I/O: a local root is
// one replica's alone (local.go); on a shared root (sessions.shared) every
// replica serves every session, and file locks on the volume keep the
// quota, the cap and the idle cleanup exact across replicas (shared.go).
// The Manager keeps what both share: the limits, the janitor, the leases
// and the metrics.
package session

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/config"
)

// displayName is how a principal is shown: "" (no auth) is Anonymous.
func displayName(principal string) string {
	if principal == "" {
		return Anonymous
	}
	return principal
}

// Errors of Acquire and Delete; front-ends map them to their statuses.
var (
	ErrNotFound = errors.New("no such session")
	ErrBusy     = errors.New("a call in the session is running")
	ErrTooMany  = errors.New("too many sessions")
)

// Reasons a session is deleted, as OnDelete hears them.
const (
	ReasonExpired = "expired"
	ReasonDeleted = "deleted"
)

const (
	metaDir  = ".meta"
	trashDir = ".trash"
)

// Info describes one session.
type Info struct {
	ID, Principal string
	Bytes         int64
	CreatedAt     time.Time
	LastUsedAt    time.Time
}

// Options configures a Manager.
type Options struct {
	// Root is the directory the sessions live in; created if missing.
	Root string
	// Limits are the sessions section in force (SetLimits swaps it).
	Limits config.Sessions
	Logger *slog.Logger
	// Metrics receives toolnexus_sessions and toolnexus_session_bytes
	// (nil: not registered).
	Metrics prometheus.Registerer
	// OnDelete hears every deleted session (expired or deleted by a
	// caller), after its workspace is gone; the audit trail listens here.
	OnDelete func(info Info, reason string)
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

// Manager owns every session's workspace.
type Manager struct {
	root    string
	backend Backend // local or shared, by sessions.shared at New
	log     *slog.Logger
	now     func() time.Time
	limits  atomic.Pointer[config.Sessions]
	// errors counts what Env.Dropped hears (toolnexus_session_errors_total).
	errors *prometheus.CounterVec

	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New opens the sessions under opts.Root (finding those a previous run
// left) and starts the janitor that deletes idle ones; Close stops it.
func New(opts Options) (*Manager, error) {
	if opts.Root == "" || !filepath.IsAbs(opts.Root) {
		return nil, fmt.Errorf("sessions: root %q must be an absolute path", opts.Root)
	}
	if err := os.MkdirAll(opts.Root, 0o755); err != nil {
		return nil, fmt.Errorf("sessions: cannot create %s: %w", opts.Root, err)
	}
	root, err := filepath.EvalSymlinks(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	m := &Manager{root: root, log: opts.Logger, now: opts.Now,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolnexus_session_errors_total",
		Help: "Errors of session bookkeeping no caller was told of (logged at warn), by operation."}, []string{"op"})
	for _, op := range []string{OpRelease, OpSweep, OpPersist, OpRemove, OpClose} {
		m.errors.WithLabelValues(op)
	}
	lim := opts.Limits
	m.limits.Store(&lim)
	env := Env{Root: root, Limits: m.Limits, Now: m.now, Logger: m.log, OnDelete: opts.OnDelete, Dropped: m.dropped}
	newBackend := NewLocalBackend
	if lim.Shared {
		newBackend = NewSharedBackend
	}
	if m.backend, err = newBackend(env); err != nil {
		return nil, err
	}
	if opts.Metrics != nil {
		opts.Metrics.MustRegister(m.collectors()...)
	}
	go m.janitor()
	return m, nil
}

// dropped logs and counts an error no caller is told of.
func (m *Manager) dropped(op string, err error) {
	m.errors.WithLabelValues(op).Inc()
	m.log.Warn("session: "+op+" failed; nobody was waiting for it", "error", err)
}

// Root is the directory the sessions live in.
func (m *Manager) Root() string { return m.root }

// SetLimits swaps the sessions section (on reload); existing sessions keep
// their workspaces.
func (m *Manager) SetLimits(l config.Sessions) {
	m.limits.Store(&l)
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Limits is the sessions section in force.
func (m *Manager) Limits() config.Sessions { return *m.limits.Load() }

// Close stops the janitor and closes the backend (a local one records when
// each session was last used, so a restart resumes their idle clocks).
// Sessions stay on disk.
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		close(m.stop)
		<-m.done
		m.backend.Close()
	})
}

// Acquire marks a call running in the session, creating the session (and
// its workspace) on first use. principal is the caller's token name, ""
// without auth. The caller must Release the lease when the
// call is over. The id must have passed Validate.
func (m *Manager) Acquire(principal, id string) (*Lease, error) {
	s, err := m.backend.Acquire(principal, id)
	if err != nil {
		return nil, err
	}
	return &Lease{s: s, m: m}, nil
}

// Lease is one call's hold on its session, and the call's tool.Workspace.
type Lease struct {
	s       *Session
	m       *Manager
	touched atomic.Bool
}

// Session is the leased session.
func (l *Lease) Session() *Session { return l.s }

// Dir is the session's workspace; asking for it has the workspace measured
// when the call ends.
func (l *Lease) Dir() string {
	l.touched.Store(true)
	return l.s.dir
}

// Grow admits n more bytes while the session stays within sessions.maxBytes.
// A write that does not grow the workspace is always admitted, so a session
// over its quota can shrink. Admitted bytes count at once, so concurrent
// calls share the room left; the measurement after the call corrects it.
func (l *Lease) Grow(n int64) error {
	limit := l.m.Limits().MaxBytes
	if limit <= 0 || n == 0 {
		l.s.addBytes(n)
		return nil
	}
	return l.m.backend.Grow(l.s, n, limit)
}

// quotaError refuses a write of n more bytes to a workspace using used of
// limit, in words for the model.
func quotaError(used, n, limit int64) error {
	if used >= limit {
		return fmt.Errorf("the session's workspace is over its quota: %d of %d bytes used (sessions.maxBytes); delete files to make room before writing", used, limit)
	}
	return fmt.Errorf("the session's workspace quota would be exceeded: this write needs %d more bytes and %d of %d are used (sessions.maxBytes); delete files to make room", n, used, limit)
}

// FileSizeLimit is what is left of the quota, or -1 without one.
func (l *Lease) FileSizeLimit() int64 {
	limit := l.m.Limits().MaxBytes
	if limit <= 0 {
		return -1
	}
	return max(limit-l.m.backend.Used(l.s), 0)
}

// Release ends the call: the workspace is measured when the call used it,
// the idle clock restarts, and the session may be deleted again once no
// other call runs in it.
func (l *Lease) Release() {
	l.m.backend.Release(l.s, l.touched.Load())
}

// measure sums the sizes of the regular files under dir (symlinks are not
// followed; a sparse file counts its full size).
func measure(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// List returns the sessions of principal, or every session when all is
// set, sorted by principal then id.
func (m *Manager) List(principal string, all bool) []Info {
	out := m.backend.List(principal, all)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Principal != out[j].Principal {
			return out[i].Principal < out[j].Principal
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Delete deletes a session and its workspace now: ErrNotFound when there is
// no such session, ErrBusy while a call in it runs.
func (m *Manager) Delete(principal, id string) error {
	return m.backend.Delete(principal, id)
}

// moveToTrash moves a workspace out of its place with one rename and
// returns where it went; "" when it could not be moved and was removed in
// place instead (before a new session of the same id can be created there).
func (e Env) moveToTrash(dir string) string {
	trash := filepath.Join(e.Root, trashDir)
	if err := os.MkdirAll(trash, 0o755); err == nil {
		if tmp, err := os.MkdirTemp(trash, "s-"); err == nil {
			if os.Rename(dir, filepath.Join(tmp, "w")) == nil {
				return tmp
			}
			e.dropped(OpRemove, os.Remove(tmp))
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		e.dropped(OpRemove, fmt.Errorf("workspace %s not fully removed: %w", dir, err))
	}
	return ""
}

// finishRemoval removes what moveToTrash moved aside and reports the
// deletion.
func (e Env) finishRemoval(info Info, reason, dir, gone string) {
	if gone != "" {
		if err := os.RemoveAll(gone); err != nil {
			e.dropped(OpRemove, fmt.Errorf("workspace of %s/%s (%s) not fully removed: %w", info.Principal, info.ID, dir, err))
		}
	}
	if e.Logger != nil {
		e.Logger.Info("session deleted", "principal", info.Principal, "session", info.ID, "reason", reason, "bytes", info.Bytes)
	}
	if e.OnDelete != nil {
		e.OnDelete(info, reason)
	}
}

// emptyTrash removes what earlier runs left in .trash, entry by entry.
func (e Env) emptyTrash() {
	trash := filepath.Join(e.Root, trashDir)
	es, err := os.ReadDir(trash)
	if !errors.Is(err, fs.ErrNotExist) {
		e.dropped(OpRemove, err)
	}
	for _, ent := range es {
		e.dropped(OpRemove, os.RemoveAll(filepath.Join(trash, ent.Name())))
	}
}

// janitor deletes idle sessions until Close. It looks every quarter of the
// idle timeout (at most every 30 s), so a session lives between idleTimeout
// and idleTimeout plus one look after its last call.
func (m *Manager) janitor() {
	defer close(m.done)
	t := time.NewTimer(m.interval())
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-m.kick:
		case <-t.C:
			m.Sweep()
		}
		t.Reset(m.interval())
	}
}

func (m *Manager) interval() time.Duration {
	return min(max(m.Limits().IdleTimeout/4, time.Millisecond), 30*time.Second)
}

// Sweep deletes every session idle for longer than the idle timeout and
// records the last use of the others. The janitor calls it; tests may too.
func (m *Manager) Sweep() {
	m.backend.Sweep(m.now(), m.Limits().IdleTimeout)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// collectors are the gauges of how many sessions this process has open
// and the bytes their workspaces use, kept by the backend as they change
// (a scrape walks nothing), without session ids as labels; and the count
// of errors nobody was told of.
func (m *Manager) collectors() []prometheus.Collector {
	count := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toolnexus_sessions", Help: "Sessions with a workspace on this server."},
		func() float64 {
			n, _ := m.backend.Stats()
			return float64(n)
		})
	bytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "toolnexus_session_bytes", Help: "Bytes used by all session workspaces, as last measured."},
		func() float64 {
			_, b := m.backend.Stats()
			return float64(b)
		})
	return []prometheus.Collector{count, bytes, m.errors}
}
