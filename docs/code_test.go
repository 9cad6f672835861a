package docs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go/x/exp/schema"

	"github.com/toolnexus/toolnexus/internal/policy"
)

// Every Cedar block loads as toolnexus loads a policy file, and every
// schema block parses and resolves.
func TestCedarBlocksLoad(t *testing.T) {
	for _, b := range allBlocks(t) {
		switch {
		case b.lang == "cedar" && b.marker != "illustrative":
			t.Run(b.String(), func(t *testing.T) {
				if _, err := policy.Parse(b.String(), []byte(b.text)); err != nil {
					t.Fatalf("%v\n%s", err, b.text)
				}
			})
		case b.lang == "cedarschema" && b.marker == "":
			t.Run(b.String(), func(t *testing.T) {
				var s schema.Schema
				if err := s.UnmarshalCedar([]byte(b.text)); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Resolve(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// Every Go block is a program that builds inside this module (written to
// a directory of its own under the docs package, removed afterwards).
func TestGoBlocksBuild(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.lang != "go" || b.marker != "" {
			continue
		}
		t.Run(b.String(), func(t *testing.T) {
			if !strings.HasPrefix(strings.TrimSpace(b.text), "package main") {
				t.Fatalf("a go block must be a whole program (package main), or be marked illustrative:\n%s", b.text)
			}
			dir, err := os.MkdirTemp(".", "gobuild-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("go", "build", "-o", os.DevNull, "./"+dir).CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
		})
	}
}

// Every nginx block is a valid http-level nginx config (nginx -t).
func TestNginxBlocksParse(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.lang != "nginx" || b.marker != "" {
			continue
		}
		t.Run(b.String(), func(t *testing.T) {
			bin := "/usr/sbin/nginx"
			if p, err := exec.LookPath("nginx"); err == nil {
				bin = p
			}
			if _, err := os.Stat(bin); err != nil {
				if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
					t.Fatal("nginx is not installed; TOOLNEXUS_REQUIRE_E2E=1 requires it (apt-get install nginx)")
				}
				t.Skip("nginx is not installed")
			}
			dir := t.TempDir()
			conf := filepath.Join(dir, "nginx.conf")
			body := fmt.Sprintf("pid %s/nginx.pid;\nerror_log %s/error.log;\nevents {}\nhttp {\naccess_log off;\nclient_body_temp_path %s;\n%s\n}\n", dir, dir, dir, b.text)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "-t", "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log")).CombinedOutput(); err != nil {
				t.Fatalf("nginx -t: %v\n%s", err, out)
			}
		})
	}
}
