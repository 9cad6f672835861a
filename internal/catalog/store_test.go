package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/catalog/pintest"
)

func TestMemoryStoreContract(t *testing.T) {
	pintest.Run(t, func(*testing.T) catalog.Store { return catalog.NewMemoryStore() })
}

func TestFileStoreContract(t *testing.T) {
	pintest.Run(t, func(t *testing.T) catalog.Store {
		s, err := catalog.NewFileStore(filepath.Join(t.TempDir(), "pins"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Two processes on one directory (two stores here) see each other's pins
// and never lose one: each change re-reads the file under the lock.
func TestFileStoreSharedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pins")
	a, err := catalog.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := catalog.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.Trust(ctx, "mcp/a", []catalog.Pin{pintest.Def("a_x", "X.")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Trust(ctx, "mcp/b", []catalog.Pin{pintest.Def("b_y", "Y.")}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []catalog.Store{a, b} {
		for src, name := range map[string]string{"mcp/a": "a_x", "mcp/b": "b_y"} {
			if pins, seen, err := s.Layer(ctx, src); err != nil || !seen || pins[name].Name != name {
				t.Fatalf("%s: %v %v %v", src, pins, seen, err)
			}
		}
	}
	reopened, err := catalog.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pins, _, _ := reopened.Layer(ctx, "mcp/b"); pins["b_y"].Digest != pintest.Def("b_y", "Y.").Digest {
		t.Fatalf("pins did not survive a reopen: %v", pins)
	}
	fi, err := os.Stat(filepath.Join(dir, catalog.PinsFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pins.json must be private to the server: %v %v", fi.Mode(), err)
	}
}

// A pins file that does not parse is refused, never replaced: starting
// afresh would trust every definition again (a rug pull made easy by
// corrupting one file).
func TestFileStoreRefusesACorruptFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, catalog.PinsFile), []byte(`{"sources": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := catalog.NewFileStore(dir)
	if err == nil || !strings.Contains(err.Error(), "does not parse") || !strings.Contains(err.Error(), "restore it from a backup") {
		t.Fatalf("corrupt pins.json: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, catalog.PinsFile)); string(b) != `{"sources": [` {
		t.Fatal("the corrupt file was overwritten")
	}
}

func TestCheckDir(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(dir, "new", "pins"), ""},
		{file, "is not a directory"},
		{ro, "is not writable"},
		{filepath.Join(ro, "pins"), "cannot be created"},
	} {
		err := catalog.CheckDir(tc.dir)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckDir(%s) = %v, want %q", tc.dir, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("CheckDir created a directory")
	}
}
