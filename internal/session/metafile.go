package session

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// metaRecord is a session's metadata file: its creation time, and on a
// shared root the bytes its workspace uses (measured, plus what writes
// admitted since) and whether a call used the workspace since the last
// measurement. A single replica writes only the first line.
type metaRecord struct {
	created int64 // unix nanoseconds
	bytes   int64
	dirty   bool
}

// parseMeta reads a metadata file's content; lines after the first are
// optional.
func parseMeta(b []byte) (metaRecord, bool) {
	var r metaRecord
	lines := bytes.Split(trimNL(b), []byte("\n"))
	var err error
	if r.created, err = strconv.ParseInt(string(lines[0]), 10, 64); err != nil {
		return metaRecord{}, false
	}
	if len(lines) > 1 {
		r.bytes, _ = strconv.ParseInt(string(lines[1]), 10, 64)
	}
	r.dirty = len(lines) > 2 && string(lines[2]) == "1"
	return r, true
}

func (r metaRecord) encode() []byte {
	b := strconv.AppendInt(nil, r.created, 10)
	b = append(b, '\n')
	b = strconv.AppendInt(b, r.bytes, 10)
	b = append(b, '\n')
	if r.dirty {
		return append(b, "1\n"...)
	}
	return append(b, "0\n"...)
}

// readMeta reads the record from an open metadata file; an empty file is
// a zero record (a session being made).
func readMeta(f *os.File) (metaRecord, error) {
	var buf [96]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return metaRecord{}, err
	}
	if n == 0 {
		return metaRecord{}, nil
	}
	r, _ := parseMeta(buf[:n]) // a damaged file reads as new: created now, measured
	return r, nil
}

// writeMeta replaces the record and sets the file's mtime, the session's
// last use, to now.
func writeMeta(f *os.File, r metaRecord, now time.Time) error {
	b := r.encode()
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return err
	}
	return touch(f, now)
}

// touch records now as the session's last use: the metadata file's mtime.
func touch(f *os.File, now time.Time) error {
	tv := unix.NsecToTimeval(now.UnixNano())
	return unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv})
}
