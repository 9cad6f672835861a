package engine

import (
	"path/filepath"
	"slices"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// sandboxRunner is the sandbox the sources of cfg start their commands
// in: the server's probed Sandbox with the policy the config sets. It is
// nil when the engine has no Sandbox (an embedding without one).
func (e *Engine) sandboxRunner(cfg *config.Config) *sandbox.Runner {
	if e.opts.Sandbox == nil {
		return nil
	}
	sc := cfg.Sandbox
	return &sandbox.Runner{Box: e.opts.Sandbox, Policy: sandbox.Policy{
		ReadPaths: sc.ReadPaths,
		Masks:     sandboxMasks(cfg),
		Private:   sessionsRoot(cfg),
		Network:   sc.Network,
		Egress:    e.egressProxy(cfg),
		Limits:    sc.Limits,
	}}
}

// InterpreterSandbox is the sandbox a run_code interpreter starts in: the
// one bash's commands run in, with the masks and private directories every
// command has; the interpreter adds nothing of its own (internal/codemode).
// Nil when the engine has no Sandbox.
func (e *Engine) InterpreterSandbox(cfg *config.Config) *sandbox.Runner {
	if e.opts.Sandbox == nil {
		return nil
	}
	return &sandbox.Runner{Box: e.opts.Sandbox, Policy: sandbox.Policy{Masks: sandboxMasks(cfg), Private: sessionsRoot(cfg)}}
}

// sessionsRoot is the sessions' root, which every command sees empty but
// for its own session's workspace.
func sessionsRoot(cfg *config.Config) []string {
	if root, err := cfg.SessionsRoot(); err == nil {
		return []string{root}
	}
	return nil
}

// sandboxMasks are what a command must not read even where it lies below a
// readable path: the config file's directory (only the file itself when
// that directory is a system root such as /etc), the TLS files, /run,
// /root and the sessions' root (should a read path contain it).
func sandboxMasks(cfg *config.Config) []string {
	masks := []string{"/run", "/root"}
	if root, err := cfg.SessionsRoot(); err == nil {
		masks = append(masks, root)
	}
	if cfg.Path != "" {
		dir := filepath.Dir(cfg.Path)
		if dir == "/" || slices.Contains(sandbox.SystemPaths, dir) {
			masks = append(masks, cfg.Path)
		} else {
			masks = append(masks, dir)
		}
	}
	tls := cfg.Server.TLS
	for _, p := range []string{tls.Cert, tls.Key, tls.ClientCA} {
		if p != "" {
			masks = append(masks, cfg.Resolve(p))
		}
	}
	return masks
}
