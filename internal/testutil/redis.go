package testutil

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a real redis-server (Debian's package) on a free
// loopback port, private to one test: no persistence, stopped with the
// test. Kill and Start let a test take it away and bring it back on the
// same port, as an outage would.
type RedisServer struct {
	// Addr is host:port; URL is redis://Addr.
	Addr, URL string
	// Password is what clients must AUTH with ("" = none).
	Password string

	t   testing.TB
	bin string
	dir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	log    strings.Builder
}

// RedisOption changes how StartRedis runs the server.
type RedisOption func(*RedisServer)

// RedisPassword makes the server require a password (requirepass).
func RedisPassword(pw string) RedisOption { return func(r *RedisServer) { r.Password = pw } }

// redisPath finds redis-server, or skips the test (fails it when
// TOOLNEXUS_REQUIRE_E2E=1, as CI sets).
func redisPath(t testing.TB) string {
	t.Helper()
	return Installed(t, "redis-server", "the test", "redis-server", "/usr/bin/redis-server", "/usr/sbin/redis-server")
}

// StartRedis starts a redis-server for t and stops it when t ends.
func StartRedis(t testing.TB, opts ...RedisOption) *RedisServer {
	t.Helper()
	r := &RedisServer{t: t, bin: redisPath(t), dir: t.TempDir()}
	for _, o := range opts {
		o(r)
	}
	var err error
	for range 5 { // another process may take the free port first
		r.Addr = freeLoopback(t)
		if err = r.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	r.URL = "redis://" + r.Addr
	t.Cleanup(func() { r.Kill() })
	return r
}

func freeLoopback(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start runs the server again on its address after Kill.
func (r *RedisServer) Start() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *RedisServer) start() error {
	_, port, _ := net.SplitHostPort(r.Addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"}
	if r.Password != "" {
		args = append(args, "--requirepass", r.Password)
	}
	cmd := exec.Command(r.bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := StartTied(cmd); err != nil { // gone with the test binary even when no cleanup runs
		return fmt.Errorf("starting redis-server: %w", err)
	}
	exited := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.log.Reset()
	r.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.mu.Lock()
			r.log.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
		}
		_ = cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			r.mu.Lock()
			defer r.mu.Unlock()
			return fmt.Errorf("redis-server on %s exited: %s", r.Addr, r.log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	r.Kill()
	return fmt.Errorf("redis-server never listened on %s", r.Addr)
}

// Kill ends the server with SIGKILL (no shutdown, nothing saved); it
// returns once the process is gone. Killing a stopped server does nothing.
func (r *RedisServer) Kill() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// Pid is the running server's process id (0 while it is stopped).
func (r *RedisServer) Pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Pause stops the server with SIGSTOP: its port still accepts connections
// (the kernel completes the handshake) but nothing is answered, as a Redis
// stuck in a long command, a frozen VM or a network black hole looks to a
// client. Resume (or Kill, which the test's cleanup does anyway) ends it.
func (r *RedisServer) Pause() { r.signal(syscall.SIGSTOP) }

// Resume lets a paused server go on (SIGCONT).
func (r *RedisServer) Resume() { r.signal(syscall.SIGCONT) }

func (r *RedisServer) signal(sig syscall.Signal) {
	r.t.Helper()
	r.mu.Lock()
	cmd := r.cmd
	r.mu.Unlock()
	if cmd == nil {
		r.t.Fatalf("redis-server on %s is not running", r.Addr)
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		r.t.Fatalf("signal %v to redis-server: %v", sig, err)
	}
}
