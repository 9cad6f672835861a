package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type proc struct {
	pid, ppid int
	cmdline   string
}

// descendants lists the live processes below root, read from /proc
// (zombies excluded: they have ended and only wait to be reaped).
func descendants(root int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		if ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			out = append(out, c)
			walk(c.pid)
		}
	}
	walk(root)
	return out
}

// readProc reads a process's parent and command line; ok is false for a
// process that is gone or a zombie.
func readProc(pid int) (proc, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || fields[0] == "Z" || fields[0] == "X" {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(fields[1])
	cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
	cl := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if cl == "" {
		cl = "[" + string(stat[bytes.IndexByte(stat, '(')+1:i]) + "]"
	}
	return proc{pid: pid, ppid: ppid, cmdline: cl}, true
}

// orphanZombies lists the zombies re-parented to parent, except the
// process except (the command, which exec.Cmd.Wait reaps itself).
func orphanZombies(parent, except int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) >= 2 && fields[0] == "Z" && fields[1] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}
