package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// PinsFile and LockFile are the files a file store keeps in its directory.
const (
	PinsFile = "pins.json"
	LockFile = "pins.lock"
)

// fileStore is the Store of one process (NewMemoryStore) or of a directory
// (NewFileStore). With a directory, every operation holds the lock file
// (flock: shared to read, exclusive to change) and re-reads pins.json when
// another process changed it, so two processes on one directory do not
// lose each other's pins; each change is written to a temporary file and
// renamed over pins.json, so a crash leaves the old file or the new one.
type fileStore struct {
	dir string // "" = memory only

	mu    sync.Mutex
	state fileState
	stamp fileStamp // of the pins.json state was read from
}

// fileState is pins.json.
type fileState struct {
	Version int                     `json:"version"`
	Sources map[string]*sourceState `json:"sources"`
	Held    []Held                  `json:"held"`
}

type sourceState struct {
	Seen bool           `json:"seen"`
	Pins map[string]Pin `json:"pins"`
}

type fileStamp struct {
	ino, size int64
	mtime     int64
}

// NewMemoryStore keeps the pins in this process only: they do not survive
// a restart (for tests and programs that embed the core).
func NewMemoryStore() Store { return &fileStore{state: emptyState()} }

// NewFileStore keeps the pins in dir (created 0700 if missing), in
// pins.json. A pins.json that cannot be read or parsed is an error: the
// pins are never silently started afresh, which would trust every
// definition again.
func NewFileStore(dir string) (Store, error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &fileStore{dir: dir, state: emptyState()}
	err := s.locked(unix.LOCK_SH, func() (bool, error) { return false, nil })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// CheckDir reports why a file store could not keep its pins in dir: a
// path that is not a directory, one that cannot be created, written or
// read, or a pins.json that does not parse. It creates nothing.
func CheckDir(dir string) error {
	if dir == "" {
		return errors.New("no directory given")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(dir)
		for {
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
			parent = filepath.Dir(parent)
		}
		if unix.Access(parent, unix.W_OK|unix.X_OK) != nil {
			return fmt.Errorf("%s does not exist and cannot be created (%s is not writable)", dir, parent)
		}
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if unix.Access(dir, unix.W_OK|unix.X_OK) != nil {
		return fmt.Errorf("%s is not writable by this process (uid %d)", dir, os.Getuid())
	}
	for _, name := range []string{PinsFile, LockFile} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil && unix.Access(p, unix.R_OK|unix.W_OK) != nil {
			return fmt.Errorf("%s is not readable and writable by this process (uid %d)", p, os.Getuid())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, PinsFile))
	if err == nil {
		var st fileState
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("%s does not parse (%v); restore it from a backup, or delete it to trust every definition afresh", filepath.Join(dir, PinsFile), err)
		}
	}
	return nil
}

func emptyState() fileState { return fileState{Version: 1, Sources: map[string]*sourceState{}} }

// locked runs op on the current state under the lock (how: LOCK_SH or
// LOCK_EX); op reports whether it changed the state, which is then written.
func (s *fileStore) locked(how int, op func() (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		_, err := op()
		return err
	}
	lf, err := os.OpenFile(filepath.Join(s.dir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := flockRetry(lf, how); err != nil {
		return err
	}
	if err := s.refresh(); err != nil {
		return err
	}
	changed, err := op()
	if err != nil || !changed {
		return err
	}
	if how != unix.LOCK_EX {
		return errors.New("pins changed under a shared lock")
	}
	return s.write()
}

func flockRetry(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// refresh re-reads pins.json when it is not the file state came from.
func (s *fileStore) refresh() error {
	path := filepath.Join(s.dir, PinsFile)
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	if errors.Is(err, unix.ENOENT) {
		s.state, s.stamp = emptyState(), fileStamp{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	stamp := fileStamp{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano()}
	if stamp == s.stamp {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	next := emptyState()
	if err := json.Unmarshal(b, &next); err != nil {
		return fmt.Errorf("%s does not parse: %v", path, err)
	}
	if next.Sources == nil {
		next.Sources = map[string]*sourceState{}
	}
	s.state, s.stamp = next, stamp
	return nil
}

func (s *fileStore) write() error {
	b, err := json.MarshalIndent(s.state, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, PinsFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	path := filepath.Join(s.dir, PinsFile)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err == nil {
		s.stamp = fileStamp{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano()}
	}
	return nil
}

func (s *fileStore) source(name string) *sourceState {
	src := s.state.Sources[name]
	if src == nil {
		src = &sourceState{Pins: map[string]Pin{}}
		s.state.Sources[name] = src
	}
	if src.Pins == nil {
		src.Pins = map[string]Pin{}
	}
	return src
}

func (s *fileStore) Layer(_ context.Context, source string) (map[string]Pin, bool, error) {
	var pins map[string]Pin
	var seen bool
	err := s.locked(unix.LOCK_SH, func() (bool, error) {
		src := s.state.Sources[source]
		if src != nil {
			pins, seen = maps(src.Pins), src.Seen
		}
		return false, nil
	})
	return pins, seen, err
}

func maps(m map[string]Pin) map[string]Pin {
	out := make(map[string]Pin, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *fileStore) Trust(_ context.Context, source string, pins []Pin) (map[string]Pin, error) {
	out := make(map[string]Pin, len(pins))
	err := s.locked(unix.LOCK_EX, func() (bool, error) {
		src := s.source(source)
		src.Seen = true
		for _, p := range pins {
			if _, ok := src.Pins[p.Name]; !ok {
				src.Pins[p.Name] = p
			}
			out[p.Name] = src.Pins[p.Name]
		}
		return true, nil
	})
	return out, err
}

func (s *fileStore) PinnedElsewhere(_ context.Context, source string, names []string) (map[string]string, error) {
	out := map[string]string{}
	err := s.locked(unix.LOCK_SH, func() (bool, error) {
		for _, n := range names {
			for other, src := range s.state.Sources {
				if _, ok := src.Pins[n]; ok && other != source {
					out[n] = other
					break
				}
			}
		}
		return false, nil
	})
	return out, err
}

func (s *fileStore) Hold(_ context.Context, h Held) (Held, error) {
	var got Held
	err := s.locked(unix.LOCK_EX, func() (bool, error) {
		i := slices.IndexFunc(s.state.Held, func(x Held) bool { return x.Source == h.Source && x.Tool == h.Tool })
		switch {
		case i >= 0 && s.state.Held[i].ID == h.ID:
			got = s.state.Held[i]
			return false, nil
		case i >= 0:
			s.state.Held[i] = h
		default:
			s.state.Held = append(s.state.Held, h)
		}
		got = h
		return true, nil
	})
	return got, err
}

func (s *fileStore) Withdraw(_ context.Context, id string) error {
	return s.locked(unix.LOCK_EX, func() (bool, error) {
		i := slices.IndexFunc(s.state.Held, func(x Held) bool { return x.ID == id && x.Status == Pending })
		if i < 0 {
			return false, nil
		}
		s.state.Held = slices.Delete(s.state.Held, i, i+1)
		return true, nil
	})
}

func (s *fileStore) List(context.Context) ([]Held, error) {
	var out []Held
	err := s.locked(unix.LOCK_SH, func() (bool, error) {
		out = slices.Clone(s.state.Held)
		return false, nil
	})
	SortNewestFirst(out)
	return out, err
}

// SortNewestFirst orders held definitions as List returns them: newest
// first, then by id so the order is stable.
func SortNewestFirst(hs []Held) {
	slices.SortFunc(hs, func(a, b Held) int {
		if c := b.SeenAt.Compare(a.SeenAt); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
}

func (s *fileStore) Decide(_ context.Context, id string, d Decision) (Held, error) {
	var got Held
	err := s.locked(unix.LOCK_EX, func() (bool, error) {
		i := slices.IndexFunc(s.state.Held, func(x Held) bool { return x.ID == id })
		if i < 0 {
			return false, ErrUnknown
		}
		h := &s.state.Held[i]
		if h.Status != Pending {
			got = *h
			return false, ErrDecided
		}
		Record(h, d)
		if d.Approve {
			src := s.source(h.Source)
			src.Seen = true
			src.Pins[h.Tool] = h.New
		}
		got = *h
		return true, nil
	})
	return got, err
}

// Record writes decision d onto h; on approval h.New becomes a pin by the
// approver, at the decision's time. For Store implementations.
func Record(h *Held, d Decision) {
	if d.At.IsZero() {
		d.At = time.Now()
	}
	h.Status, h.DecidedBy, h.DecidedAt, h.Reason = Denied, d.By, d.At, d.Reason
	if d.Approve {
		h.Status = Approved
		h.New.At, h.New.By = d.At, d.By
	}
}
