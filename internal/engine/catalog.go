package engine

import (
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/config"
)

// CatalogSettings are the config's pinning and overrides sections as the
// catalog applies them.
func CatalogSettings(cfg *config.Config) catalog.Settings {
	s := catalog.Settings{Mode: catalog.Mode(cfg.Pinning.Mode), HoldFirstSight: cfg.Pinning.HoldFirstSight}
	if len(cfg.ToolOverrides) > 0 {
		s.Overrides = make(map[string]catalog.Override, len(cfg.ToolOverrides))
		for name, o := range cfg.ToolOverrides {
			s.Overrides[name] = catalog.Override{Name: o.Name, Description: o.Description, Arguments: o.Arguments}
		}
	}
	return s
}
