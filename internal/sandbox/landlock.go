package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Access right sets, by what the rule grants.
const (
	accessRead = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// accessFileOnly are the rights that mean anything on a file rule.
	accessFileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	accessWrite    = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	accessReadWrite = accessRead | accessWrite
	// accessAboveRO is what a read-only directory gets when a masked
	// path lies below it: its listing, and no file content (that right
	// would reach the mask too).
	accessAboveRO = ll.AccessFSReadDir
	// accessExec is what an ExecFiles entry allows: executing the file
	// (which reads it).
	accessExec = ll.AccessFSExecute | ll.AccessFSReadFile
	// accessDev is what /dev/null and its like allow.
	accessDev = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// handledFS is the filesystem rights the kernel knows at each ABI version.
func handledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return (1 << 16) - 1
	case abi >= 3:
		return (1 << 15) - 1
	case abi == 2:
		return (1 << 14) - 1
	case abi == 1:
		return (1 << 13) - 1
	}
	return 0
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// pathRule is one path and the rights it grants below it.
type pathRule struct {
	path   string
	access uint64
}

// expand turns allowed paths into rules that leave out every mask: a
// read-only directory with a mask below it is not granted whole; it gets
// its listing and each of its entries is expanded in turn, so the mask's
// own entry is the only one left without a rule. A mask that is an allowed
// path drops it. Missing paths are skipped.
func expand(allowed []pathRule, masks []string) []pathRule {
	var out []pathRule
	for _, a := range allowed {
		out = expandOne(out, a, masks)
	}
	return out
}

func expandOne(out []pathRule, a pathRule, masks []string) []pathRule {
	fi, err := os.Stat(a.path)
	if err != nil {
		return out
	}
	below := false
	for _, m := range masks {
		if m == a.path {
			return out
		}
		if within(m, a.path) {
			below = true
		}
	}
	if !below || !fi.IsDir() {
		if !fi.IsDir() {
			a.access &= accessFileOnly
		}
		return append(out, a)
	}
	if a.access&ll.AccessFSWriteFile != 0 {
		// Landlock cannot take a subtree back out of a read-write
		// grant without also refusing writes to every file created
		// later beside it, so read-write paths are granted whole.
		return append(out, a)
	}
	out = append(out, pathRule{path: a.path, access: accessAboveRO})
	entries, err := os.ReadDir(a.path)
	if err != nil {
		return out
	}
	for _, e := range entries {
		out = expandOne(out, pathRule{path: filepath.Join(a.path, e.Name()), access: a.access}, masks)
	}
	return out
}

// within reports whether p is below dir (not dir itself); both are clean
// absolute paths.
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

// openRule is a pathRule with its path opened (O_PATH), ready to be
// added to a ruleset without a lookup.
type openRule struct {
	fd     int
	access uint64
}

// openRules opens each rule's path. Paths that vanished are skipped.
func openRules(rules []pathRule) ([]openRule, error) {
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].path < rules[j].path })
	var out []openRule
	for _, r := range rules {
		fd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			closeRules(out)
			return nil, &os.PathError{Op: "open", Path: r.path, Err: err}
		}
		out = append(out, openRule{fd: fd, access: r.access})
	}
	return out, nil
}

func closeRules(rs []openRule) {
	for _, r := range rs {
		unix.Close(r.fd)
	}
}

// ruleset builds a Landlock ruleset of the fixed rules plus the call's
// own; the caller closes the returned fd.
func ruleset(abi int, network bool, fixed []openRule, call []openRule) (int, error) {
	fsMask := handledFS(abi)
	attr := ll.RulesetAttr{HandledAccessFS: fsMask}
	if abi >= 4 && !network {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, err
	}
	for _, set := range [][]openRule{fixed, call} {
		for _, r := range set {
			pb := ll.PathBeneathAttr{AllowedAccess: r.access & fsMask, ParentFd: r.fd}
			if pb.AllowedAccess == 0 {
				continue
			}
			if err := ll.LandlockAddPathBeneathRule(fd, &pb, 0); err != nil {
				if errors.Is(err, unix.EINVAL) {
					// A directory right on a file: keep the file's own.
					pb.AllowedAccess &= accessFileOnly
					if err = ll.LandlockAddPathBeneathRule(fd, &pb, 0); err == nil {
						continue
					}
				}
				unix.Close(fd)
				return -1, err
			}
		}
	}
	return fd, nil
}
