package config

import (
	"fmt"
	"path"
	"strings"
)

// checkFeatureGlobs refuses a bad glob in KEY.resources or KEY.prompts (an
// auth token, an auth group or server.mcp): path.Match syntax on the URI or
// name, or "server:PATTERN" on the MCP server's name.
func checkFeatureGlobs(key string, resources, prompts []string) error {
	for _, list := range []struct {
		name  string
		globs []string
	}{{"resources", resources}, {"prompts", prompts}} {
		for j, p := range list.globs {
			if _, err := path.Match(strings.TrimPrefix(p, "server:"), ""); err != nil {
				return keyErr(fmt.Sprintf("%s.%s[%d]", key, list.name, j), "bad glob pattern %q: %v", p, err)
			}
		}
	}
	return nil
}
