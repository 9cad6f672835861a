package sandbox_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

var benchDownload = 100 << 20

// pacedRate is the paced origin's rate, bytes per second (800 Mbit/s).
const pacedRate = 100e6

// BenchmarkEgressDownload downloads 100 MB with curl inside the sandbox:
// through the egress proxy, and with the network on (the baseline); from
// an origin on loopback as fast as it goes (where the extra hop through
// the proxy costs CPU on both ends of two loopback connections), and from
// one paced to 800 Mbit/s, as a fast internet link.
// cpu-ms/MB is this process's CPU (the proxy, and the origin server in
// both cases) per MB: the difference between the rows is the proxy's.
func BenchmarkEgressDownload(b *testing.B) {
	s, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if !s.Status().Active(sandbox.LayerNetNS) || !s.Status().Active(sandbox.LayerPIDNS) {
		b.Skip("no network namespace here")
	}
	chunk := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(benchDownload))
		paced, start, sent := r.URL.Query().Has("paced"), time.Now(), 0
		for left := benchDownload; left > 0; left -= len(chunk) {
			c := chunk[:min(left, len(chunk))]
			if _, err := w.Write(c); err != nil {
				return
			}
			sent += len(c)
			if paced {
				// A link of pacedRate: what a download from the
				// internet looks like, where the network is the limit.
				time.Sleep(time.Until(start.Add(time.Duration(float64(sent) / pacedRate * float64(time.Second)))))
			}
		}
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	rules, _ := egress.ParseRules("sandbox.egress", []string{"blob.test"}, nil)
	px := egress.New(egress.Config{Rules: rules, Resolver: names{"blob.test": public}, Dial: toLoopback})
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl")
	}
	ws, tmp := b.TempDir(), b.TempDir()
	on := sandbox.Policy{Workspace: ws, TempDir: tmp, Network: true}
	eg := sandbox.Policy{Workspace: ws, TempDir: tmp, Egress: px}
	for _, mode := range []struct {
		name string
		url  string
		pol  sandbox.Policy
	}{
		{"loopback/network-on", fmt.Sprintf("http://127.0.0.1:%d/", port), on},
		{"loopback/egress-proxy", fmt.Sprintf("http://blob.test:%d/", port), eg},
		{"paced/network-on", fmt.Sprintf("http://127.0.0.1:%d/?paced", port), on},
		{"paced/egress-proxy", fmt.Sprintf("http://blob.test:%d/?paced", port), eg},
	} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(int64(benchDownload))
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(curl, "-sSf", "-o", "/dev/null", mode.url)
				p, err := s.Start(cmd, &mode.pol)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N*benchDownload>>20), "cpu-ms/MB")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func init() {
	if v := os.Getenv("EGRESS_BENCH_BYTES"); v != "" {
		fmt.Sscan(v, &benchDownload)
	}
}
