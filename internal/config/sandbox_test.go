package config_test

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

func TestSandboxDefaults(t *testing.T) {
	cfg, err := parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sandbox
	want := sandbox.Limits{Memory: 2 << 30, Processes: 256, FileSize: 1 << 30, OpenFiles: 1024}
	if s.Mode != sandbox.ModeAuto || s.Network || len(s.ReadPaths) != 0 || s.Limits != want {
		t.Fatalf("defaults: %+v", s)
	}
}

func TestSandboxSection(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parseIn(t, dir, `{"sandbox": {"mode": "required", "network": true, "readPaths": ["/opt/tools", "data"],
		"limits": {"memory": 1048576, "processes": 0, "fileSize": 4096, "openFiles": 64, "cpu": 1500}}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sandbox
	if s.Mode != sandbox.ModeRequired || !s.Network {
		t.Fatalf("%+v", s)
	}
	if !reflect.DeepEqual(s.ReadPaths, []string{"/opt/tools", filepath.Join(dir, "data")}) {
		t.Fatalf("readPaths = %v", s.ReadPaths)
	}
	want := sandbox.Limits{Memory: 1 << 20, Processes: 0, FileSize: 4096, OpenFiles: 64, CPU: 1500 * time.Millisecond}
	if s.Limits != want {
		t.Fatalf("limits = %+v", s.Limits)
	}
}

// The commands' host ids default to 65534 and can be any unprivileged id.
func TestSandboxCommandIDs(t *testing.T) {
	cfg, err := parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.UID != sandbox.DefaultCommandID || cfg.Sandbox.GID != sandbox.DefaultCommandID {
		t.Fatalf("default ids %d:%d", cfg.Sandbox.UID, cfg.Sandbox.GID)
	}
	if cfg, err = parse(t, `{"sandbox": {"uid": 100000, "gid": 100001}}`); err != nil {
		t.Fatal(err)
	}
	if cfg.Sandbox.UID != 100000 || cfg.Sandbox.GID != 100001 {
		t.Fatalf("ids %d:%d", cfg.Sandbox.UID, cfg.Sandbox.GID)
	}
}

func TestSandboxErrorsNameTheKey(t *testing.T) {
	for text, key := range map[string]string{
		`{"sandbox": {"mode": "strict"}}`:                 "sandbox.mode",
		`{"sandbox": {"mode": 1}}`:                        "sandbox.mode",
		`{"sandbox": {"network": "yes"}}`:                 "sandbox.network",
		`{"sandbox": {"readPaths": [""]}}`:                "sandbox.readPaths[0]",
		`{"sandbox": {"readPaths": "/opt"}}`:              "sandbox.readPaths",
		`{"sandbox": {"limits": {"memory": -1}}}`:         "sandbox.limits.memory",
		`{"sandbox": {"limits": {"processes": -1}}}`:      "sandbox.limits.processes",
		`{"sandbox": {"limits": {"fileSize": -5}}}`:       "sandbox.limits.fileSize",
		`{"sandbox": {"limits": {"openFiles": -1}}}`:      "sandbox.limits.openFiles",
		`{"sandbox": {"limits": {"cpu": -1}}}`:            "sandbox.limits.cpu",
		`{"sandbox": {"limits": {"disk": 1}}}`:            "sandbox.limits.disk",
		`{"sandbox": {"netwrk": true}}`:                   "sandbox.netwrk",
		`{"sandbox": {"limits": {"memory": "2G"}}}`:       "sandbox.limits.memory",
		`{"sandbox": {"mode": "auto", "readPaths": [1]}}`: "sandbox.readPaths",
		`{"sandbox": {"uid": 0}}`:                         "sandbox.uid",
		`{"sandbox": {"gid": -1}}`:                        "sandbox.gid",
		`{"sandbox": {"uid": 4294967295}}`:                "sandbox.uid",
		`{"sandbox": {"uid": "nobody"}}`:                  "sandbox.uid",
	} {
		ce := mustFail(t, text)
		if ce.Key != key {
			t.Errorf("%s: key %q (%s), want %q", text, ce.Key, ce.Msg, key)
		}
	}
}

func parseIn(t *testing.T, dir, text string) (*config.Config, error) {
	t.Helper()
	return config.Parse([]byte(text), "", dir)
}
