package server

import (
	"errors"

	"github.com/toolnexus/toolnexus/internal/config"
)

// ConfigError is a config problem: the key that is wrong and what to do
// about it. New and Reload return it (cmd/server exits 2 on it).
type ConfigError struct {
	// Key is the config key at fault, e.g. "mcpServers.fs.command"; empty
	// when the problem is the file as a whole.
	Key string
	// Msg says what is wrong and how to fix it.
	Msg string
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return "config: " + e.Msg
	}
	return "config: " + e.Key + ": " + e.Msg
}

// publicError turns the internal config error into the public one, so an
// embedder can test for it; any other error passes as it is.
func publicError(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return &ConfigError{Key: ce.Key, Msg: ce.Msg}
	}
	return err
}

// ReloadReport says what a reload changed.
type ReloadReport struct {
	// Revision is the registry revision after the reload.
	Revision uint64
	// Rebuilt are the source instances started anew, as "kind/name".
	Rebuilt []string
	// Removed are the source instances closed, as "kind/name".
	Removed []string
	// Failed are the instances that could not start, by "kind/name"; the
	// other sources serve regardless.
	Failed map[string]error
	// Replicas are every replica's outcome, this one first, when the
	// replicas share a control plane (cluster.redis); ReplicasErr says
	// why the others could not be asked.
	Replicas    []ReplicaReload
	ReplicasErr error
}
