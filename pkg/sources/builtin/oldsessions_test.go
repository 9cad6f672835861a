package builtin_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// A sessions directory an earlier version left inside the workspace is
// named in a warning when the source is built; a clean workspace is not.
func TestOldSessionsDirectoryWarns(t *testing.T) {
	t.Parallel()
	for _, old := range []bool{true, false} {
		ws := t.TempDir()
		if old {
			if err := os.MkdirAll(filepath.Join(ws, builtin.SessionsDir, "anonymous", "s1"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var logs testutil.Buffer
		builtin.New(builtin.Config{Enabled: true, Workspace: ws}, sources.Env{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		warned := strings.Contains(logs.String(), "old sessions directory")
		if warned != old {
			t.Errorf("old directory present %v: warned %v (%s)", old, warned, logs.String())
		}
	}
}
