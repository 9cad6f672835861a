package builtin_test

import (
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/internal/confine"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// pretend is a sandbox from outside the server that claims to confine.
type pretend struct{}

func (pretend) On() bool { return true }

// An embedder handing the builtins a sandbox that only claims to confine
// gets a failed source, never a bash that runs unconfined while the
// embedder believes it is confined.
func TestForeignSandboxRefused(t *testing.T) {
	t.Parallel()
	env := sources.Env{Workspace: t.TempDir(), Sandbox: pretend{}}
	if _, err := builtin.Tools(builtin.Config{Enabled: true}, env); !errors.Is(err, confine.ErrForeign) {
		t.Fatalf("Tools with a foreign sandbox: %v, want %v", err, confine.ErrForeign)
	}
	src := builtin.New(builtin.Config{Enabled: true}, env)
	if err := src.Start(t.Context(), registry.New()); err == nil {
		t.Error("Start succeeded with a foreign sandbox")
	}
	if st := src.Status(); st.State != sources.Failed {
		t.Errorf("source state %s, want failed", st.State)
	}
}
