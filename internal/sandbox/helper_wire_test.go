package sandbox

import (
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHelperAnswersABadFrame sends the real helper a start frame it
// cannot decode, and one of an unknown type, each under a pending call's
// id: each call gets an error reply (the call ends) instead of waiting
// forever for a reply the helper used to never send.
func TestHelperAnswersABadFrame(t *testing.T) {
	s, err := New(ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.useHelper {
		t.Skip("no helper here (user or PID namespace missing)")
	}
	h, err := s.helperFor(false)
	if err != nil {
		t.Fatal(err)
	}
	for i, frame := range []struct {
		typ     byte
		payload func(id uint64) []byte
	}{
		{msgStart, func(id uint64) []byte { return binary.LittleEndian.AppendUint64(nil, id) }}, // truncated
		{msgStart, func(id uint64) []byte {
			return append(binary.LittleEndian.AppendUint64(nil, id), 0xff, 0xff, 0xff, 0xff)
		}}, // garbage
		{'?', func(id uint64) []byte {
			return (&startRequest{id: id, path: "/bin/true", argv: []string{"true"}}).encode()
		}}, // unknown type
	} {
		id := nextID.Add(1)
		p := &Process{started: make(chan error, 1), exited: make(chan unix.WaitStatus, 1)}
		h.pending.Store(id, p)
		if err := h.w.send(frame.typ, frame.payload(id), nil); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-p.started:
			if err == nil || !strings.Contains(err.Error(), "sandbox:") {
				t.Errorf("frame %d: reply %v, want the helper's error", i, err)
			}
		case <-h.dead:
			t.Fatalf("frame %d: the helper died instead of answering: %v", i, h.err)
		}
		h.pending.Delete(id)
	}
	if !h.alive() {
		t.Fatal("the helper did not survive the bad frames")
	}
}
