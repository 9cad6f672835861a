package config

import (
	"encoding/json"
)

// DefaultWatchStreams is how many WatchTools streams one principal (one
// token; every caller when auth is off) may hold open at once.
const DefaultWatchStreams = 64

// DefaultToolConcurrency caps the builtin tools that cost real resources
// per call (a process tree, a page in memory) when the config sets no
// limits.tools.NAME.maxConcurrency; 0 there lifts the cap.
var DefaultToolConcurrency = map[string]int{"bash": 8, "webfetch": 16}

// ServerLimits is `server.limits`: what one caller may hold open.
type ServerLimits struct {
	// WatchStreams caps the open WatchTools streams per principal;
	// RESOURCE_EXHAUSTED beyond it.
	WatchStreams int `json:"watchStreams"`
}

func parseServerLimits(raw json.RawMessage) (ServerLimits, error) {
	l := ServerLimits{WatchStreams: DefaultWatchStreams}
	if raw == nil {
		return l, nil
	}
	var r struct {
		WatchStreams *int `json:"watchStreams"`
	}
	if err := strictDecode("server.limits", raw, &r); err != nil {
		return l, err
	}
	if r.WatchStreams != nil {
		if *r.WatchStreams < 1 {
			return l, keyErr("server.limits.watchStreams", "must be at least 1 (open WatchTools streams per token)")
		}
		l.WatchStreams = *r.WatchStreams
	}
	return l, nil
}

// applyDefaultToolCaps gives the tools in DefaultToolConcurrency their
// cap unless the config sets one.
func applyDefaultToolCaps(l *Limits) {
	for name, n := range DefaultToolConcurrency {
		t := l.Tools[name]
		if t.MaxConcurrency != nil {
			continue
		}
		if l.Tools == nil {
			l.Tools = map[string]ToolLimits{}
		}
		t.MaxConcurrency = &n
		l.Tools[name] = t
	}
}
