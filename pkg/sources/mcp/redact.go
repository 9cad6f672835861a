package mcp

import (
	"github.com/toolnexus/toolnexus/internal/childenv"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// redactor removes the secrets a server's config expands (its headers and
// its child's environment) from any text that may reach a log, a status or
// a model.
type redactor = sources.Redactor

func newRedactor(cfg ServerConfig) redactor {
	return sources.RedactorFor(cfg.Headers, cfg.Environment)
}

// childEnvironment is a stdio server's environment: the few variables every
// child gets (internal/childenv) plus the server's own "env" entries, their
// ${NAME} and ${file:/path} references expanded. Nothing else of the
// toolnexus process's environment reaches a third-party server.
func childEnvironment(cfg ServerConfig) ([]string, error) {
	if cfg.Type != TypeLocal {
		return nil, nil
	}
	extra, err := sources.ExpandMap("env", cfg.Environment)
	if err != nil {
		return nil, err
	}
	return childenv.Build(extra), nil
}
