package sandbox

import (
	"errors"
	"net"
	"strings"

	"golang.org/x/sys/unix"
)

// EgressServer is the proxy a command with egress reaches: the sandbox
// gives it the listener it made inside the command's network namespace,
// and it serves there until the listener is closed (when the command
// exits), returning once its connections are closed too. internal/egress
// provides one.
type EgressServer interface {
	ServeEgress(l net.Listener)
}

// EgressAddr is where a command with egress finds the proxy: a loopback
// address of its own network namespace, which has nothing else.
const EgressAddr = "127.0.0.1:3128"

const egressPort = 3128

// ErrNoEgress is StartContext's refusal of a command with egress when the
// sandbox cannot give it a network namespace of its own.
var ErrNoEgress = errors.New("sandbox: sandbox.egress needs the sandbox helper with user, PID and network namespaces, which this kernel does not allow; the command was not started (without them its network could not be limited to the proxy)")

// reqEgress asks the helper for a network namespace of the command's own
// with only loopback up and the proxy's listener on it (egressNet). A
// high bit, apart from the other flags.
const reqEgress = 1 << 24

// proxyEnv are the variables that point the usual clients at the proxy.
// NO_PROXY is emptied: nothing is reached directly.
func proxyEnv(env []string) []string {
	url := "http://" + EgressAddr
	set := map[string]string{
		"HTTP_PROXY": url, "HTTPS_PROXY": url, "ALL_PROXY": "socks5h://" + EgressAddr, "NO_PROXY": "",
	}
	out := make([]string, 0, len(env)+2*len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ours := set[strings.ToUpper(name)]; !ours {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v, strings.ToLower(k)+"="+v)
	}
	return out
}

// egressNet, run by the helper on the command's thread before it drops
// its capabilities, moves the thread into a new network namespace, brings
// its loopback up and listens there at EgressAddr; the listener goes back
// to the server, which serves the proxy on it. It returns -1 when the
// request did not ask for egress.
func (r *startRequest) egressNet() (int, error) {
	if r.flags&reqEgress == 0 {
		return -1, nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return -1, errors.New("sandbox: egress network namespace: " + err.Error())
	}
	if err := loopbackUp(); err != nil {
		return -1, errors.New("sandbox: egress loopback: " + err.Error())
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, errors.New("sandbox: egress listener: " + err.Error())
	}
	sa := &unix.SockaddrInet4{Port: egressPort, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, errors.New("sandbox: egress listener: " + err.Error())
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, errors.New("sandbox: egress listener: " + err.Error())
	}
	return fd, nil
}

// loopbackUp sets IFF_UP on lo of the calling thread's network namespace.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}

// serveEgress serves the command's proxy on the listener the helper sent.
func (p *Process) serveEgress(srv EgressServer) error {
	f := p.egressFile
	p.egressFile = nil
	if f == nil {
		return errors.New("sandbox: the helper sent no egress listener")
	}
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return errors.New("sandbox: egress listener: " + err.Error())
	}
	p.egressLn = ln
	p.egressDone = make(chan struct{})
	go func() {
		defer close(p.egressDone)
		srv.ServeEgress(ln)
	}()
	return nil
}

// stopEgress closes the command's proxy listener once it has exited and
// waits for the proxy's connections to end.
func (p *Process) stopEgress() {
	if p.egressFile != nil {
		p.egressFile.Close()
		p.egressFile = nil
	}
	if p.egressLn != nil {
		p.egressLn.Close()
		<-p.egressDone
	}
}
