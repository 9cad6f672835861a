package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// CheckGenerated regenerates code from proto/ with the buf template (a path
// relative to the repository root) into a temporary directory and compares
// it file by file with the committed directory dir (relative to the
// repository root, and where the template writes). Missing, stale and
// leftover files are each reported with the fix. ignore skips committed
// files that are not generated (a cache directory); it may be nil. The test
// must run from a directory two levels below the root (examples/<lang>).
func CheckGenerated(t *testing.T, template, dir string, ignore func(rel string) bool) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// A bound for a wedged child (the first run may compile buf), not a
	// timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "tool", "-modfile=tools/go.mod", "buf", "generate", "--template", template, "-o", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate --template %s: %v\n%s", template, err, b)
	}

	fresh, committed := filepath.Join(out, dir), filepath.Join(root, dir)
	seen := map[string]bool{}
	err = filepath.WalkDir(fresh, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fresh, p)
		seen[rel] = true
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil {
			t.Errorf("%s/%s is missing; run make generate and commit it", dir, rel)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s is stale; run make generate and commit it", dir, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("buf generated nothing")
	}
	_ = filepath.WalkDir(committed, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(committed, p)
		if !seen[rel] && (ignore == nil || !ignore(rel)) {
			t.Errorf("%s/%s is not generated from proto/ any more; delete it", dir, rel)
		}
		return nil
	})
}
