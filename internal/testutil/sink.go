package testutil

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Sink is a TCP server on 127.0.0.1 that counts every byte it receives and
// answers nothing: a host that takes an upload whole, or reads what a
// proxy could not (a TLS server name with a trailing dot). It stops with
// the test.
type Sink struct {
	Port     int
	Received atomic.Int64
	// Closed gets a value as each connection ends (up to 64 unread).
	Closed chan struct{}
}

// NewSink starts a Sink; a connection quiet for 30 s is closed.
func NewSink(t testing.TB) *Sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Sink{Port: ln.Addr().(*net.TCPAddr).Port, Closed: make(chan struct{}, 64)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(time.Now().Add(30 * time.Second))
				n, _ := io.Copy(io.Discard, c)
				s.Received.Add(n)
				c.Close()
				select {
				case s.Closed <- struct{}{}:
				default:
				}
			}()
		}
	}()
	return s
}
