package core

import (
	"errors"
	"log/slog"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// newSandbox probes the kernel once for the configured mode and logs what
// commands will run under. A layer missing in mode "required" is a config
// error on sandbox.mode (the server exits 2).
func newSandbox(cfg *config.Config, log *slog.Logger) (*sandbox.Sandbox, error) {
	mode := cfg.Sandbox.Mode
	if mode == "" {
		mode = sandbox.ModeAuto
	}
	box, err := sandbox.NewAs(mode, sandbox.CommandID{UID: cfg.Sandbox.UID, GID: cfg.Sandbox.GID})
	if err != nil {
		var me *sandbox.MissingError
		if errors.As(err, &me) {
			return nil, &config.Error{Key: "sandbox.mode", Msg: err.Error()}
		}
		return nil, err
	}
	st := box.Status()
	switch {
	case mode == sandbox.ModeOff:
		log.Warn(st.String())
	case len(st.Missing()) > 0:
		log.Warn(st.String())
	default:
		log.Info(st.String())
	}
	for _, w := range engine.ReachWarnings(box, cfg) {
		log.Warn(w)
	}
	return box, nil
}

// Sandbox reports how the commands a model starts are confined.
func (c *Core) Sandbox() sandbox.Status { return c.box.Status() }

// checkSandboxMode refuses a reload that changes sandbox.mode: the kernel
// is probed once, at start.
func checkSandboxMode(old, next *config.Config) error {
	if old.Sandbox.Mode != next.Sandbox.Mode {
		return &config.Error{Key: "sandbox.mode", Msg: "changing the mode needs a restart"}
	}
	if old.Sandbox.UID != next.Sandbox.UID || old.Sandbox.GID != next.Sandbox.GID {
		return &config.Error{Key: "sandbox.uid", Msg: "changing the commands' ids needs a restart"}
	}
	return nil
}
