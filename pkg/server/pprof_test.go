package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestMainPprofListen runs server.Main in a child process (this test binary
// again) with --pprof-listen: a loopback address serves heap and CPU
// profiles; an address on every interface is refused with exit 2 before
// anything listens.
func TestMainPprofListen(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_PPROF_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfgPath, []byte(debugOnly), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(pprofAddr string) (*exec.Cmd, *bytes.Buffer, <-chan string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainPprofListen$")
		cmd.Env = append(os.Environ(), "TN_PPROF_MAIN_ARGS=--config "+cfgPath+" --listen 127.0.0.1:0 --metrics-listen off --pprof-listen "+pprofAddr)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		url := make(chan string, 1)
		var all bytes.Buffer
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if i := strings.Index(sc.Text(), "pprof="); i >= 0 {
					url <- strings.Fields(sc.Text()[i+len("pprof="):])[0]
				}
			}
			close(url)
		}()
		return cmd, &all, url
	}

	cmd, _, urlc := run("127.0.0.1:0")
	var base string
	select {
	case base = <-urlc:
	case <-time.After(30 * time.Second): // a guard against a wedged child only
	}
	if base == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the server did not log its pprof address")
	}
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
		return body
	}
	// The logged address itself is the index, linking every profile.
	if index := string(get("")); !strings.Contains(index, `href="heap"`) || !strings.Contains(index, `href="profile?seconds=30"`) {
		t.Errorf("the index %s lists no profiles:\n%s", base, index)
	}
	for _, p := range []string{"heap", "allocs", "goroutine", "profile?seconds=1"} {
		body := get(p)
		// Every profile is a gzipped protobuf.
		if _, err := gzip.NewReader(bytes.NewReader(body)); err != nil {
			t.Errorf("%s: not a gzipped profile (%d bytes): %v", p, len(body), err)
		}
	}
	if resp, err := http.Get(base + "nosuchprofile"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown profile: %s, want 404", resp.Status)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v, want 0", err)
	}

	// Every interface: refused, exit 2, the flag named.
	cmd, out, urlc := run("0.0.0.0:0")
	for range urlc {
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != server.ExitConfig {
		t.Fatalf("--pprof-listen 0.0.0.0:0: %v, want exit %d; stderr:\n%s", err, server.ExitConfig, out)
	}
	if !strings.Contains(out.String(), "--pprof-listen") || strings.Contains(out.String(), "pprof=") {
		t.Fatalf("stderr should name --pprof-listen and serve nothing:\n%s", out)
	}
}
