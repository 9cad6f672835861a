package sandbox

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ShellFlavor is how a shell spells ulimit.
type ShellFlavor int

const (
	flavorOther ShellFlavor = iota
	flavorBash
	flavorDash
)

// FlavorOf names the shell at path, following symlinks (/bin/sh is often
// dash).
func FlavorOf(path string) ShellFlavor {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	switch filepath.Base(path) {
	case "bash":
		return flavorBash
	case "dash":
		return flavorDash
	}
	return flavorOther
}

// LimitScript is the shell text that sets the limits, soft and hard,
// before a command runs: "ulimit -v N -n N ... || exit 126; ". It is
// empty when nothing is limited. The command cannot raise a hard limit
// again (that needs CAP_SYS_RESOURCE in the host's user namespace), and
// a limit the shell cannot set stops the command before it runs.
func LimitScript(flavor ShellFlavor, l Limits) string {
	var parts []string
	add := func(flag string, v int64) {
		if v > 0 {
			parts = append(parts, "ulimit "+flag+" "+strconv.FormatInt(v, 10))
		}
	}
	add("-v", ceilDiv(l.Memory, 1024))
	add("-n", int64(l.OpenFiles))
	if l.CPU > 0 {
		add("-t", int64((l.CPU+time.Second-1)/time.Second))
	}
	switch flavor {
	case flavorBash:
		add("-f", ceilDiv(l.FileSize, 1024))
		add("-u", int64(l.Processes))
	case flavorDash:
		add("-f", ceilDiv(l.FileSize, 512))
		add("-p", int64(l.Processes))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " && ") + " || exit 126; "
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// WrapArgv runs argv under the limits through /bin/sh: the shell sets
// them and then execs the program in its own place.
func WrapArgv(argv []string, l Limits) []string {
	script := LimitScript(FlavorOf("/bin/sh"), l)
	if script == "" {
		return argv
	}
	return append([]string{"/bin/sh", "-c", script + `exec "$0" "$@"`}, argv...)
}

// limit.
