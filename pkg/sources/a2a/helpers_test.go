package a2a_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

type logBuffer = testutil.Buffer

type started struct {
	reg  *registry.Registry
	src  sources.Source
	logs *logBuffer
	err  error
}

// startAgent builds and starts the source for cfg, closing it when the test ends.
func startAgent(t testing.TB, id string, cfg a2a.AgentConfig, env sources.Env) started {
	t.Helper()
	logs := &logBuffer{}
	env.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := registry.New(registry.WithLogger(env.Logger))
	src := a2a.New(id, cfg, env)
	t.Cleanup(func() {
		if err := src.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	err := src.Start(context.Background(), reg)
	return started{reg: reg, src: src, logs: logs, err: err}
}

// agentConfig is a config for a fake agent with fast polling.
func agentConfig(cardURL string) a2a.AgentConfig {
	return a2a.AgentConfig{Card: cardURL, Timeout: 10000, PollEvery: 5}
}

func taskArgs(task string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"task": task})
	return b
}

func execute(ctx context.Context, reg *registry.Registry, name, task string) tool.Result {
	return testutil.Direct{Reg: reg}.Execute(ctx, name, tool.Call{Name: name, Arguments: taskArgs(task)})
}

func toolNames(reg *registry.Registry) []string {
	var names []string
	for _, e := range reg.Snapshot().Entries() {
		names = append(names, e.Tool.Name)
	}
	return names
}
