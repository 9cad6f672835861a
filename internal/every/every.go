// Package every runs a function at a fixed interval in the background
// until it is stopped: the loop the server's readiness and config-file
// watches, the catalog's recheck and the cluster's health check each
// wrote out (a ticker, a stop channel, a goroutine that ends with it).
package every

import "time"

// Start calls f every d, from one new goroutine, until stop. stop returns
// once that goroutine has ended, so f is never running after it (nor
// after it has begun to run): what f touches may be torn down next. Call
// stop once.
func Start(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); <-ended }
}
