// Package skill discovers agent skills from SKILL.md folders and serves them
// through one `skill` tool. STUB: replaced by the skill source implementation.
package skill

import (
	"context"
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// Config is the `skills` section.
type Config struct {
	Dirs        []string       `json:"dirs"`
	Tools       sources.Filter `json:"tools,omitempty"`
	SampleLimit int            `json:"sampleLimit,omitempty"`
}

// ParseConfig reads the `skills` section: a list of directories or an object.
func ParseConfig(raw json.RawMessage) (Config, []string, error) { return Config{}, nil, nil }

// Skill is one discovered skill.
type Skill struct{ Name, Description, Dir string }

// Skipped is a SKILL.md that was not loaded.
type Skipped struct{ Path, Reason, Detail string }

// Source is the skill source.
type Source struct{ static *sources.Static }

// New makes the skill source.
func New(cfg Config, env sources.Env) *Source {
	return &Source{static: sources.NewStatic(registry.Layer(registry.KindSkill), nil, nil)}
}

func (s *Source) Layer() registry.LayerID { return s.static.Layer() }
func (s *Source) Start(ctx context.Context, pub sources.Publisher) error {
	return s.static.Start(ctx, pub)
}
func (s *Source) Status() sources.Status { return s.static.Status() }
func (s *Source) Close() error           { return nil }

// Prompt is the skills catalog text for the system prompt.
func (s *Source) Prompt() string { return "No skills are currently available." }

// Inventory lists the skills and the skipped entries.
func (s *Source) Inventory() ([]Skill, []Skipped) { return nil, nil }
