package nodeexample_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestGeneratedCodeIsFresh regenerates the TypeScript from proto/ with the
// pinned plugin into a temporary directory and compares it with the
// committed examples/node/gen, so a proto change cannot leave the Node
// client behind. Fix a failure with:
//
//	go tool -modfile=tools/go.mod buf generate --template buf.gen.ts.yaml
func TestGeneratedCodeIsFresh(t *testing.T) {
	requireNode(t)
	if testing.Short() {
		t.Skip("-short: skipping the buf run")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// A bound for a wedged child (the first run may compile buf), not a
	// timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "tool", "-modfile=tools/go.mod", "buf", "generate", "--template", "buf.gen.ts.yaml", "-o", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate --template buf.gen.ts.yaml: %v\n%s", err, b)
	}

	fresh := filepath.Join(out, "examples", "node", "gen")
	committed := "gen"
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
			t.Errorf("examples/node/gen/%s is missing; regenerate and commit it", rel)
			return nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/node/gen/%s is stale; regenerate and commit it", rel)
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
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel(committed, p); !seen[rel] {
				t.Errorf("examples/node/gen/%s is not generated from proto/ any more; delete it", rel)
			}
		}
		return err
	})
}
