package vault

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is a Backend in a directory (credentials.dir): one file per record,
// written whole and renamed into place, so a crash never leaves half a
// record. It is meant for one replica: locks and the change feed are this
// process's own (replicas share a vault through Redis).
type Dir struct {
	local
	dir string
}

var _ Backend = (*Dir)(nil)

// File names are the record names in lower-case base32, so any name fits
// and Keys reads the names back without opening a file.
var fileNames = base32.HexEncoding.WithPadding(base32.NoPadding)

const recSuffix = ".rec"

// NewDir uses dir (created 0700 if missing) for the records.
func NewDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %v", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write in %s: %v", dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return &Dir{dir: dir}, nil
}

func (d *Dir) path(key string) string {
	return filepath.Join(d.dir, strings.ToLower(fileNames.EncodeToString([]byte(key)))+recSuffix)
}

// A file is 8 bytes of expiry (Unix nanoseconds, 0 = never), then the record.
func (d *Dir) Put(_ context.Context, key string, rec []byte, ttl time.Duration) error {
	buf := make([]byte, 8, 8+len(rec))
	if e := expiry(ttl); !e.IsZero() {
		binary.BigEndian.PutUint64(buf, uint64(e.UnixNano()))
	}
	buf = append(buf, rec...)
	tmp, err := os.CreateTemp(d.dir, ".put-*")
	if err != nil {
		return fmt.Errorf("vault: %v", unwrapPath(err))
	}
	_, werr := tmp.Write(buf)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("vault: writing a record: %v", unwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), d.path(key)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("vault: %v", unwrapPath(err))
	}
	d.changed(key)
	return nil
}

// read returns a file's record; an expired one is removed and not found.
func (d *Dir) read(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("vault: %v", unwrapPath(err))
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("vault: %s is not a record file", filepath.Base(p))
	}
	if e := binary.BigEndian.Uint64(b); e != 0 && time.Now().UnixNano() >= int64(e) {
		os.Remove(p)
		return nil, ErrNotFound
	}
	return b[8:], nil
}

func (d *Dir) Get(_ context.Context, key string) ([]byte, error) { return d.read(d.path(key)) }

// Take renames the file away first: rename is atomic, so of two takers
// only one finds the file to rename.
func (d *Dir) Take(_ context.Context, key string) ([]byte, error) {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	taken := filepath.Join(d.dir, ".taken-"+hex.EncodeToString(suffix[:]))
	if err := os.Rename(d.path(key), taken); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("vault: %v", unwrapPath(err))
	}
	defer os.Remove(taken)
	rec, err := d.read(taken)
	if err == nil {
		d.changed(key)
	}
	return rec, err
}

func (d *Dir) Delete(_ context.Context, key string) (bool, error) {
	_, err := d.read(d.path(key)) // an expired record is not "there"
	there := err == nil
	if rerr := os.Remove(d.path(key)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return false, fmt.Errorf("vault: %v", unwrapPath(rerr))
	}
	if there {
		d.changed(key)
	}
	return there, nil
}

func (d *Dir) Keys(_ context.Context, prefix string) ([]string, error) {
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("vault: %v", unwrapPath(err))
	}
	var out []string
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), recSuffix)
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		raw, err := fileNames.DecodeString(strings.ToUpper(name))
		if err != nil || !strings.HasPrefix(string(raw), prefix) {
			continue
		}
		if _, err := d.read(filepath.Join(d.dir, e.Name())); err == nil {
			out = append(out, string(raw))
		}
	}
	return out, nil
}

func (d *Dir) Close() error { return nil }
