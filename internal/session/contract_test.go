package session_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/internal/session/sessiontest"
)

func backendOf(newBackend func(session.Env) (session.Backend, error)) sessiontest.NewBackend {
	return func(t *testing.T, env session.Env) session.Backend {
		b, err := newBackend(env)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestLocalBackendContract(t *testing.T) {
	sessiontest.Run(t, backendOf(session.NewLocalBackend))
}

func TestSharedBackendContract(t *testing.T) {
	sessiontest.Run(t, backendOf(session.NewSharedBackend))
}
