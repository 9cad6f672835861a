package testutil

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartListening starts a peer process (tied to the test binary:
// StartTied) that prints "listening URL" on its standard output once it
// serves, and returns URL. wait bounds the start — a guard against a wedged
// process, not a synchronisation sleep. When the test ends the peer's
// standard input closes (the npm peers exit on that), then it is killed
// and waited for; its standard error is logged if the test failed.
func StartListening(t testing.TB, cmd *exec.Cmd, wait time.Duration) string {
	t.Helper()
	var stderr Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := StartTied(cmd); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", cmd.Path, stderr.String())
		}
	})
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "listening "); ok {
				url <- u
				break
			}
		}
		close(url)
		_, _ = io.Copy(io.Discard, stdout) // until the process ends
	}()
	select {
	case u, ok := <-url:
		if !ok {
			t.Fatalf("%s %v ended without printing \"listening URL\"; stderr:\n%s", cmd.Path, cmd.Args[1:], stderr.String())
		}
		return u
	case <-time.After(wait):
		t.Fatalf("%s %v did not print \"listening URL\" within %v; stderr:\n%s", cmd.Path, cmd.Args[1:], wait, stderr.String())
	}
	return ""
}
