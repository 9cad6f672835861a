package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"golang.org/x/sys/unix"
)

// The server and its sandbox helper talk over a unix stream socketpair in
// frames: a 4-byte little-endian payload length, a type byte, the number
// of file descriptors the frame carries (sent with the frame's first
// byte, SCM_RIGHTS), and the payload.
const (
	frameHeader = 6
	maxFrame    = 64 << 20
	maxFrameFDs = 32
)

// Frame types.
const (
	msgStart   byte = 'S' // server → helper: start a command
	msgStarted byte = 'P' // helper → server: its pid, or why it did not start
	msgExited  byte = 'X' // helper → server: its wait status
	msgReady   byte = 'R' // helper → server: set up, or why not
)

// wire is one end of the socketpair. send is safe for concurrent use;
// recv is called by one reader goroutine.
type wire struct {
	c   *net.UnixConn
	wmu sync.Mutex

	acc  []byte // bytes read and not yet framed
	fds  []int  // descriptors received and not yet claimed by a frame
	rbuf []byte
	oob  []byte
}

func newWire(c *net.UnixConn) *wire {
	return &wire{c: c, rbuf: make([]byte, 64<<10), oob: make([]byte, unix.CmsgSpace(4*maxFrameFDs))}
}

// send writes one frame and its descriptors. The descriptors stay open:
// the kernel holds its own references once the frame is sent.
func (w *wire) send(typ byte, payload []byte, fds []int) error {
	if len(fds) > maxFrameFDs {
		return fmt.Errorf("sandbox: %d descriptors in one frame (at most %d)", len(fds), maxFrameFDs)
	}
	frame := make([]byte, frameHeader, frameHeader+len(payload))
	binary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	frame[4] = typ
	frame[5] = byte(len(fds))
	frame = append(frame, payload...)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	n, _, err := w.c.WriteMsgUnix(frame, oob, nil)
	for err == nil && n < len(frame) {
		var m int
		m, err = w.c.Write(frame[n:])
		n += m
	}
	return err
}

// recv reads the next frame: its type, payload and descriptors (close-on-exec).
func (w *wire) recv() (byte, []byte, []int, error) {
	for {
		if len(w.acc) >= frameHeader {
			size := int(binary.LittleEndian.Uint32(w.acc))
			if size > maxFrame {
				return 0, nil, nil, errors.New("sandbox: oversized frame")
			}
			if len(w.acc) >= frameHeader+size {
				typ, nfd := w.acc[4], int(w.acc[5])
				if nfd > len(w.fds) {
					return 0, nil, nil, errors.New("sandbox: a frame's descriptors are missing")
				}
				payload := append([]byte(nil), w.acc[frameHeader:frameHeader+size]...)
				fds := append([]int(nil), w.fds[:nfd]...)
				w.fds = w.fds[nfd:]
				w.acc = w.acc[:copy(w.acc, w.acc[frameHeader+size:])]
				return typ, payload, fds, nil
			}
		}
		n, oobn, flags, _, err := w.c.ReadMsgUnix(w.rbuf, w.oob)
		if oobn > 0 {
			msgs, perr := unix.ParseSocketControlMessage(w.oob[:oobn])
			if perr == nil {
				for _, m := range msgs {
					if fds, err := unix.ParseUnixRights(&m); err == nil {
						w.fds = append(w.fds, fds...)
					}
				}
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			return 0, nil, nil, errors.New("sandbox: descriptors were truncated")
		}
		if n > 0 {
			w.acc = append(w.acc, w.rbuf[:n]...)
		}
		if err != nil {
			return 0, nil, nil, err
		}
		if n == 0 {
			return 0, nil, nil, errors.New("sandbox: connection closed")
		}
	}
}

// closeFDs closes received descriptors nobody claimed.
func (w *wire) closeFDs() {
	for _, fd := range w.fds {
		unix.Close(fd)
	}
	w.fds = nil
}

// enc builds a payload.
type enc struct{ b []byte }

func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) str(s string) { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *enc) strs(ss []string) {
	e.u32(uint32(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// dec reads a payload; a short payload sets bad and yields zeros.
type dec struct {
	b   []byte
	bad bool
}

func (d *dec) u32() uint32 {
	if len(d.b) < 4 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *dec) u64() uint64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) str() string {
	n := int(d.u32())
	if n > len(d.b) {
		d.bad = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) strs() []string {
	n := int(d.u32())
	if n > len(d.b)/4 {
		d.bad = true
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

// viewOps reads a request's view steps.
func (d *dec) viewOps() []viewOp {
	n := int(d.u32())
	if n > len(d.b)/8 { // each step takes at least 8 bytes
		d.bad = true
		return nil
	}
	out := make([]viewOp, n)
	for i := range out {
		kind := d.u32()
		out[i] = viewOp{kind: byte(kind), path: d.str()}
		if kind > 0xff {
			d.bad = true
		}
	}
	return out
}

// startRequest is what the helper needs to start one command. Its
// descriptors travel with the frame: the command's files (0, 1, 2 and
// any extra), then the Landlock ruleset and the pids group's tasks file
// when the flags say so.
type startRequest struct {
	id      uint64
	flags   uint32
	unshare uint64 // namespaces the forking thread enters for the command
	nfiles  uint32
	path    string
	dir     string
	argv    []string
	env     []string
	pgid    uint32
	// view builds the command's view of the filesystem in a mount
	// namespace of its own (view.go); its viewBindFD steps take the
	// request's last descriptors, in order.
	view []viewOp
}

// startRequest flags.
const (
	reqNoNewPrivs = 1 << iota
	reqSeccomp
	reqRuleset
	reqCgroup
	reqSetpgid
	reqSetsid
	reqNewUser
	reqView
)

func (r *startRequest) encode() []byte {
	e := enc{b: make([]byte, 0, 256)}
	e.u64(r.id)
	e.u32(r.flags)
	e.u64(r.unshare)
	e.u32(r.nfiles)
	e.u32(r.pgid)
	e.str(r.path)
	e.str(r.dir)
	e.strs(r.argv)
	e.strs(r.env)
	e.u32(uint32(len(r.view)))
	for _, op := range r.view {
		e.u32(uint32(op.kind))
		e.str(op.path)
	}
	return e.b
}

func decodeStart(b []byte) (*startRequest, error) {
	d := dec{b: b}
	r := &startRequest{id: d.u64(), flags: d.u32(), unshare: d.u64(), nfiles: d.u32(), pgid: d.u32()}
	r.path, r.dir, r.argv, r.env = d.str(), d.str(), d.strs(), d.strs()
	r.view = d.viewOps()
	if d.bad || len(d.b) != 0 {
		return nil, errors.New("sandbox: malformed start request")
	}
	return r, nil
}

// startReply: the command's pid, or the start error (its errno when it is
// one, and its text).
func encodeStarted(id uint64, pid int, err error) []byte {
	e := enc{}
	e.u64(id)
	e.u32(uint32(pid))
	var errno unix.Errno
	msg := ""
	if err != nil {
		msg = err.Error()
		if !errors.As(err, &errno) {
			errno = 0
		}
	}
	e.u32(uint32(errno))
	e.str(msg)
	return e.b
}

func encodeExited(id uint64, status unix.WaitStatus) []byte {
	e := enc{}
	e.u64(id)
	e.u32(uint32(status))
	return e.b
}
