package egress_test

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
)

// sink is an origin that sends size bytes to each connection after
// reading one byte, or echoes one byte when size is 0.
func sink(b *testing.B, size int) (int, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				one := make([]byte, 1)
				if _, err := c.Read(one); err != nil {
					return
				}
				if size == 0 {
					c.Write(one)
					return
				}
				for left := size; left > 0; left -= len(buf) {
					if _, err := c.Write(buf[:min(left, len(buf))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, func() { ln.Close() }
}

func benchProxy(b *testing.B) (string, func()) {
	rules, _ := egress.ParseRules("sandbox.egress", []string{"origin.test"}, nil)
	px := egress.New(egress.Config{Rules: rules, Resolver: &resolver{m: map[string][]netip.Addr{"origin.test": addrs(public)}}, Limits: benchLimits, Dial: toLoopback})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); px.Bind(egress.Call{Tool: "bash"}).ServeEgress(ln) }()
	return ln.Addr().String(), func() { ln.Close(); <-done }
}

// open connects to the origin directly or through a CONNECT tunnel.
func open(b *testing.B, proxyAddr string, port int) net.Conn {
	if proxyAddr == "" {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT origin.test:%d HTTP/1.1\r\nHost: origin.test\r\n\r\n", port)
	const ok = "HTTP/1.1 200 Connection established\r\n\r\n"
	head := make([]byte, len(ok))
	if _, err := io.ReadFull(c, head); err != nil || string(head) != ok {
		b.Fatalf("CONNECT: %q %v", head, err)
	}
	return c
}

// BenchmarkConnectSetup is a connection's set-up to the first byte back:
// direct, and through the proxy (CONNECT, the decision with a resolver
// lookup, the dial). p50-µs is the median; the difference between the
// rows is what the proxy adds.
func BenchmarkConnectSetup(b *testing.B) {
	port, stop := sink(b, 0)
	defer stop()
	paddr, pstop := benchProxy(b)
	defer pstop()
	for _, mode := range []struct{ name, proxy string }{{"direct", ""}, {"proxy", paddr}} {
		b.Run(mode.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			one := []byte{1}
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				c := open(b, mode.proxy, port)
				c.Write(one)
				if _, err := io.ReadFull(c, one); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
				c.Close()
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
		})
	}
}

// BenchmarkTunnelThroughput moves 100 MB through a CONNECT tunnel, and
// directly for the baseline. cpu-µs/MB is this process's CPU (origin,
// client and, through the tunnel, the proxy) per MB: on a loaded machine
// a steadier measure than the wall clock.
func BenchmarkTunnelThroughput(b *testing.B) {
	const size = 100 << 20
	port, stop := sink(b, size)
	defer stop()
	paddr, pstop := benchProxy(b)
	defer pstop()
	for _, mode := range []struct{ name, proxy string }{{"direct", ""}, {"proxy", paddr}} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(size)
			buf := make([]byte, 1<<20)
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				c := open(b, mode.proxy, port)
				c.Write([]byte{1})
				n, _ := io.CopyBuffer(io.Discard, c, buf)
				c.Close()
				if n != size {
					b.Fatalf("%d bytes", n)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*size>>20), "cpu-µs/MB")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchLimits = egress.Limits{Bytes: 1 << 40, Idle: time.Minute}

// BenchmarkAddrClass is the classification of one public address, as
// webfetch's dial and the proxy's decision make it for each address.
func BenchmarkAddrClass(b *testing.B) {
	for _, a := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"} {
		ip := netip.MustParseAddr(a)
		b.Run(a, func(b *testing.B) {
			for b.Loop() {
				if egress.AddrClass(ip) != "" {
					b.Fatal(a)
				}
			}
		})
	}
}
