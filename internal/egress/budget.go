package egress

import (
	"context"
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The byte limit is a budget every connection of a command draws on before
// it moves a byte: a copy reserves what it is about to move, moves at most
// that, and gives back what it did not move. So the bytes moved never pass
// the limit, however many connections copy at once — counting after each
// copy let 30 connections each move a chunk past it. A copy reserves only
// bytes already waiting in the socket (or in hand, for what the proxy
// writes itself), so a reservation is never held while a connection waits
// for its peer: a quiet connection cannot starve a busy one.

// budgetWait is how often a copy that found the whole budget reserved by
// copies under way looks again.
const budgetWait = 2 * time.Millisecond

// take reserves up to want (> 0) bytes of the command's byte budget and
// returns how many it got (at least 1), or errByteLimit once the limit is
// used up. When every byte left is reserved by copies under way it waits
// for them to end (or ctx to be done).
func (c *Command) take(ctx context.Context, want int64) (int64, error) {
	max := c.p.cfg.Limits.Bytes
	if max <= 0 {
		return want, nil
	}
	for {
		committed := c.committed.Load()
		if left := max - committed; left > 0 {
			grant := min(want, left)
			if c.committed.CompareAndSwap(committed, committed+grant) {
				return grant, nil
			}
			continue
		}
		if c.bytes.Load() >= max {
			return 0, errByteLimit
		}
		t := time.NewTimer(budgetWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// moved records n bytes moved of a reservation of reserved, giving the
// rest back.
func (c *Command) moved(reserved, n int64) {
	c.bytes.Add(n)
	if c.p.cfg.Limits.Bytes > 0 && reserved > n {
		c.committed.Add(n - reserved)
	}
}

// waiting waits until src has bytes to read or has ended (bounded by its
// read deadline) and returns how many are there, 0 at the end. A
// connection that is not a socket reports want: its copy reserves as much
// as it may move.
func waiting(src any, want int64) (int64, error) {
	sc, ok := src.(syscall.Conn)
	if !ok {
		return want, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var serr error
	var one [1]byte
	err = rc.Read(func(fd uintptr) bool {
		got, _, e := unix.Recvfrom(int(fd), one[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case errors.Is(e, unix.EAGAIN):
			return false // nothing yet: the poller waits, up to the deadline
		case e != nil:
			serr = e
		case got > 0:
			n, serr = unix.IoctlGetInt(int(fd), unix.SIOCINQ)
			n = max(n, 1)
		}
		return true
	})
	if err == nil {
		err = serr
	}
	return int64(n), err
}
