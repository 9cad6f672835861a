package skill

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Source discovers skills and publishes the skill tool into the skill layer.
// It implements sources.Source; Prompt, Inventory and Rebuild serve
// GetSkillsPrompt, ListSkills and reload.
type Source struct {
	id     registry.LayerID
	roots  []string
	filter sources.Filter
	sample int // files per skill; 0 = no <skill_files> block
	log    *slog.Logger

	mu     sync.Mutex // serialises Start, Rebuild and Close
	pub    sources.Publisher
	closed bool

	cat    atomic.Pointer[catalog]
	status atomic.Pointer[sources.Status]
}

// catalog is the result of one discovery, immutable once built.
type catalog struct {
	skills    []Skill // loaded and kept by the filter, sorted by name
	skipped   []Skipped
	byName    map[string]*rendered
	available string // "a, b" or "none", for the not-found text
	prompt    string
}

// ErrNotStarted is returned by Rebuild before Start, and ErrClosed after Close.
var (
	ErrNotStarted = errors.New("skill: Rebuild needs a started source; call Start first")
	ErrClosed     = errors.New("skill: the source is closed; make a new one with New")
)

// New makes the skill source. Nothing is read until Start. Relative
// directories resolve against env.BaseDir (the working directory when that
// is empty); a leading ~/ means the user's home directory, where personal
// skill folders usually live.
func New(cfg Config, env sources.Env) *Source {
	s := &Source{
		id:     registry.Layer(sources.KindSkill),
		filter: cfg.Tools,
		sample: cfg.sampleCap(),
		log:    env.Log().With("source", sources.KindSkill.Name),
	}
	for _, d := range cfg.Dirs {
		d = expandHome(d)
		if !filepath.IsAbs(d) && env.BaseDir != "" {
			d = filepath.Join(env.BaseDir, d)
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		s.roots = append(s.roots, filepath.Clean(d))
	}
	return s
}

// expandHome turns "~" and "~/x" into paths under the home directory. When
// the home directory is unknown the path is left as written and resolves
// like any relative path.
func expandHome(d string) string {
	if d != "~" && !strings.HasPrefix(d, "~/") && !strings.HasPrefix(d, "~"+string(filepath.Separator)) {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return d
	}
	return filepath.Join(home, d[1:])
}

// Layer implements sources.Source.
func (s *Source) Layer() registry.LayerID { return s.id }

// Start discovers the skills and publishes the skill tool. Missing
// directories and bad SKILL.md files are logged and listed by Inventory;
// only a done ctx or a refused publish fails it.
func (s *Source) Start(ctx context.Context, pub sources.Publisher) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.pub = pub
	return s.rebuildLocked(ctx)
}

// Rebuild re-discovers the skills and republishes the layer, for reload.
// The previous skills stay served until the new set is published.
func (s *Source) Rebuild() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.pub == nil:
		return ErrNotStarted
	}
	return s.rebuildLocked(context.Background())
}

func (s *Source) rebuildLocked(ctx context.Context) error {
	cat, err := s.build(ctx)
	if err == nil {
		err = s.pub.Replace(s.id, []tool.Tool{newTool(cat)})
	}
	if err != nil {
		s.setStatus(sources.Failed, err.Error())
		return err
	}
	s.cat.Store(cat)
	s.setStatus(sources.Connected, "")
	s.log.Info("skills loaded", "skills", len(cat.skills), "skipped", len(cat.skipped), "dirs", len(s.roots))
	return nil
}

// build runs discovery and renders every kept skill's output up front, so
// the Execute path does no file system work.
func (s *Source) build(ctx context.Context) (*catalog, error) {
	all, skipped, err := discover(ctx, s.roots, s.log)
	if err != nil {
		return nil, err
	}
	if len(s.filter) > 0 {
		names := make([]string, len(all))
		for i, f := range all {
			names[i] = f.Name
		}
		for _, w := range s.filter.Unknown("skills", names) {
			s.log.Warn(w)
		}
	}
	kept := make([]found, 0, len(all))
	for _, f := range all {
		if s.filter.Keep(f.Name) {
			kept = append(kept, f)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })

	cat := &catalog{skipped: skipped, byName: make(map[string]*rendered, len(kept))}
	names := make([]string, 0, len(kept))
	for _, f := range kept {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		files := sampleFiles(f.Dir, s.sample)
		cat.skills = append(cat.skills, f.Skill)
		cat.byName[f.Name] = &rendered{
			name:   f.Name,
			dir:    f.Dir,
			output: render(f.Name, f.body, f.Dir, s.sample > 0, files),
		}
		names = append(names, f.Name)
	}
	cat.available = "none"
	if len(names) > 0 {
		cat.available = strings.Join(names, ", ")
	}
	cat.prompt = buildPrompt(cat.skills)
	return cat, nil
}

func (s *Source) setStatus(state sources.State, msg string) {
	s.status.Store(&sources.Status{Layer: s.id, State: state, Error: msg})
}

// Status implements sources.Source.
func (s *Source) Status() sources.Status {
	if st := s.status.Load(); st != nil {
		return *st
	}
	return sources.Status{Layer: s.id, State: sources.Connected}
}

// Close implements sources.Source. The source holds no goroutines or open
// files; Close only refuses later Start and Rebuild calls. The layer stays
// until the owner removes it.
func (s *Source) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Prompt is the skills catalog text for the system prompt (GetSkillsPrompt).
func (s *Source) Prompt() string {
	if c := s.cat.Load(); c != nil {
		return c.prompt
	}
	return NoSkillsPrompt
}

// Inventory returns the loaded skills sorted by name and the skipped
// entries in discovery order (ListSkills). Skills left out by the tools
// filter appear in neither. The slices are the caller's to keep.
func (s *Source) Inventory() ([]Skill, []Skipped) {
	c := s.cat.Load()
	if c == nil {
		return nil, nil
	}
	return append([]Skill(nil), c.skills...), append([]Skipped(nil), c.skipped...)
}

// Dirs returns the absolute root directories searched, in order.
func (s *Source) Dirs() []string { return append([]string(nil), s.roots...) }

var _ sources.Source = (*Source)(nil)

// PromptFor is the catalog as a caller may see it: the catalog describes
// what the skill tool serves, so a caller whose allowlist (allows, by tool
// name and source label) leaves that tool out is told there are no skills,
// as a server without any would tell it. A nil source (no skill
// directories configured) has no skills.
func (s *Source) PromptFor(allows func(toolName, source string) bool) string {
	if s == nil || !allows(ToolName, sources.KindSkill.Name) {
		return NoSkillsPrompt
	}
	return s.Prompt()
}
