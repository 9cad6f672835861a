package codemode

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// limitMemory sets the interpreter's address-space limit (RLIMIT_AS, with
// prlimit from the server: the child in the sandbox cannot read its own
// /proc) to what it maps now that it is up — the Go runtime's
// reservations, and under -race the detector's shadow — plus bytes, so the
// limit bounds what the script adds. Past it an allocation fails and the
// Go runtime dies ("out of memory"), which the server reports.
func limitMemory(pid int, bytes uint64) error {
	if bytes == 0 {
		return nil
	}
	base, err := vmSize(pid)
	if err != nil {
		return err
	}
	lim := unix.Rlimit{Cur: base + bytes, Max: base + bytes}
	return unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil)
}

// vmSize is the address-space size of process pid (VmSize).
func vmSize(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmSize of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize for process %d", pid)
}
