package testutil

import (
	"sync"
	"testing"
)

// Hammer runs work over and over in n goroutines (w is each one's index,
// 0 to n-1) until stop, which ends them and waits for them all; a work
// returning false ends its own goroutine early (after a t.Errorf, say).
// It is how the race tests keep writers or readers busy while the test
// changes what they touch. stop may be called more than once and runs at
// cleanup anyway, so a test that fails half-way leaves no goroutine behind.
func Hammer(t testing.TB, n int, work func(w int) bool) (stop func()) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if !work(w) {
					return
				}
			}
		}()
	}
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}
