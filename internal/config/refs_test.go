package config_test

import (
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// An unresolved reference is named by the key as the config spells it:
// `--check` said mcpServers.NAME.environment.K for a config that says env.
func TestCheckRefsNamesTheKeyAsWritten(t *testing.T) {
	for _, spelling := range []string{"env", "environment"} {
		t.Run(spelling, func(t *testing.T) {
			cfg, err := config.Parse([]byte(`{"mcpServers": {"local": {"command": "srv", "`+spelling+`": {"API_KEY": "${TOOLNEXUS_REFS_TEST_UNSET}"}}}}`), "", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var ce *config.Error
			if err := cfg.CheckRefs(); !errors.As(err, &ce) || ce.Key != "mcpServers.local."+spelling+".API_KEY" {
				t.Fatalf("CheckRefs: %v, want a config error at mcpServers.local.%s.API_KEY", err, spelling)
			}
		})
	}
}
