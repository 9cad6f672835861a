package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

var servingRe = regexp.MustCompile(`msg="toolnexus serving" grpc=(\S+) metrics=(\S+)`)

// serverRSS starts the real server binary with cfg, lists all tools once
// (so the per-revision caches exist), waits for it to settle and reads
// process_resident_memory_bytes from its own /metrics.
func serverRSS(bin, tmp, cfg string) (float64, error) {
	path := filepath.Join(tmp, fmt.Sprintf("rss-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return 0, err
	}
	cmd := exec.Command(bin, "--config", path, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--workspace", filepath.Join(tmp, "ws"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stderr)
	var addr, maddr string
	for sc.Scan() {
		if m := servingRe.FindStringSubmatch(sc.Text()); m != nil {
			addr, maddr = m[1], m[2]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if addr == "" {
		return 0, fmt.Errorf("server did not start")
	}
	conn, err := dial(addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := pb.NewRegistryServiceClient(conn).ListTools(context.Background(), &pb.ListToolsRequest{PageSize: 10000}); err != nil {
		return 0, err
	}
	time.Sleep(time.Second)
	resp, err := http.Get("http://" + maddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "process_resident_memory_bytes ") {
			return strconv.ParseFloat(strings.Fields(line)[1], 64)
		}
	}
	return 0, fmt.Errorf("no process_resident_memory_bytes in /metrics")
}

// httpToolsConfig declares n HTTP tools (never called): a realistic way to
// hold 10,000 tools in one server.
func httpToolsConfig(n int) string {
	var b strings.Builder
	b.WriteString(`{"builtins": false, "http": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "api_%05d", "description": "Fetch record %d from the inventory API.", "url": "http://127.0.0.1:9/records/{id}"}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}
