package codemode

import "encoding/json"

// start is the server's first line to the child: the script and its limits.
type start struct {
	Script    string `json:"script"`
	WallMS    int64  `json:"wall_ms"`
	MaxOutput int    `json:"max_output"`
}

// fromChild is one line from the child: an inner call, or the end.
type fromChild struct {
	Call *innerCall `json:"call,omitempty"`
	Done *done      `json:"done,omitempty"`
}

type innerCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// done is the script's end: its return value (JSON), what it printed, or
// the error that stopped it.
type done struct {
	Value   json.RawMessage `json:"value,omitempty"`
	Printed string          `json:"printed,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// InnerResult is a tool's answer to one inner call, as the script sees it.
type InnerResult struct {
	Output     string         `json:"output"`
	IsError    bool           `json:"is_error,omitempty"`
	Structured map[string]any `json:"structured,omitempty"`
	// Fatal ends the script (a cap was reached): not catchable.
	Fatal string `json:"fatal,omitempty"`
}
