package vault_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/vaulttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryContract(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T) (vault.Backend, vault.Backend) {
		m := vault.NewMemory()
		return m, m
	})
}

func TestDirContract(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T) (vault.Backend, vault.Backend) {
		d, err := vault.NewDir(filepath.Join(t.TempDir(), "vault"))
		if err != nil {
			t.Fatal(err)
		}
		return d, d
	})
}

const secret = "gho_access-token-THAT-MUST-NOT-LEAK"

// The files of a directory vault hold no token text, no principal name,
// and are private to the server's user; a second process (a restart)
// with the same key file opens them.
func TestDirHoldsNoPlaintextAndSurvivesARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	keys := vault.RandomKeys()
	d, err := vault.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := vault.New(d, keys)
	if err := v.Put(context.Background(), "conn/github/corp:alice", []byte(`{"access":"`+secret+`"}`), 0); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d files, want 1", len(ents))
	}
	fi, _ := ents[0].Info()
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("record file mode %v: readable by others", fi.Mode())
	}
	b, _ := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	for _, s := range []string{secret, "access", "alice"} {
		if bytes.Contains(b, []byte(s)) || strings.Contains(ents[0].Name(), s) {
			t.Errorf("the vault file shows %q", s)
		}
	}
	d2, _ := vault.NewDir(dir)
	v2, _ := vault.New(d2, keys)
	got, err := v2.Get(context.Background(), "conn/github/corp:alice")
	if err != nil || !bytes.Contains(got, []byte(secret)) {
		t.Fatalf("after a restart: %q %v", got, err)
	}
}

// Rotation: a record sealed under the old key opens once a new key is put
// first; a rewrite seals it under the new key, which then opens it alone.
// A key file without the sealing key says so.
func TestKeyRotation(t *testing.T) {
	old := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // base64 of 32 bytes
	fresh := strings.Repeat("ab", 32)                     // hex
	ctx := context.Background()
	m := vault.NewMemory()
	k1, err := vault.ParseKeys([]byte("# the current key\n" + old + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := vault.New(m, k1)
	_ = v1.Put(ctx, "conn/a", []byte("tokens"), 0)
	k2, err := vault.ParseKeys([]byte(fresh + "\n" + old + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := vault.New(m, k2)
	got, err := v2.Get(ctx, "conn/a")
	if err != nil || string(got) != "tokens" {
		t.Fatalf("old record under the rotated keys: %q %v", got, err)
	}
	_ = v2.Put(ctx, "conn/a", got, 0)
	k3, _ := vault.ParseKeys([]byte(fresh))
	v3, _ := vault.New(m, k3)
	if got, err := v3.Get(ctx, "conn/a"); err != nil || string(got) != "tokens" {
		t.Fatalf("rewritten record under the new key alone: %q %v", got, err)
	}
	_ = v1.Put(ctx, "conn/b", []byte("x"), 0)
	if _, err := v3.Get(ctx, "conn/b"); err == nil || !strings.Contains(err.Error(), "not in credentials.keyFile") {
		t.Fatalf("a record of a dropped key: %v", err)
	}
}

func TestParseKeysErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "holds no key"},
		{"# only a comment\n", "holds no key"},
		{"c2hvcnQ=\n", "line 1 is not a 32-byte key"},
		{strings.Repeat("ab", 32) + "\n\n" + strings.Repeat("ab", 32), "line 3 repeats a key"},
	} {
		_, err := vault.ParseKeys([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := vault.LoadKeys(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}
