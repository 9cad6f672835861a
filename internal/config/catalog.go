package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// The pinning modes (docs/catalog.md).
const (
	PinningOff  = "off"
	PinningHold = "hold"
	PinningWarn = "warn"
)

// Pinning is the `pinning` section: tool definitions trusted on first use
// and held back (or warned about) when their source changes them.
type Pinning struct {
	// Mode is PinningOff (default), PinningHold or PinningWarn.
	Mode string
	// Dir is where the pins are kept, as written (relative to the config's
	// directory); empty with cluster.redis, which keeps them in Redis.
	Dir string
	// HoldFirstSight holds the tools of a source seen for the first time
	// too, instead of trusting them.
	HoldFirstSight bool
}

// On reports whether definitions are pinned.
func (p Pinning) On() bool { return p.Mode == PinningHold || p.Mode == PinningWarn }

// ToolOverride is one entry of the `overrides` section, keyed by the
// registry name a source publishes.
type ToolOverride struct {
	// Name renames the tool ("" keeps it).
	Name string
	// Description replaces the description (nil keeps it).
	Description *string
	// Arguments are fixed argument values: removed from the input schema,
	// added to every call, refused from a caller.
	Arguments map[string]json.RawMessage
}

// validToolName is what a rename may be: what the registry's own names
// are made of (tool.Sanitize), at most 128 characters.
var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

func parsePinning(raw json.RawMessage, cluster Cluster) (Pinning, error) {
	p := Pinning{Mode: PinningOff}
	if raw == nil {
		return p, nil
	}
	var r struct {
		Mode           *string `json:"mode"`
		Dir            string  `json:"dir"`
		HoldFirstSight bool    `json:"holdFirstSight"`
	}
	if err := strictDecode("pinning", raw, &r); err != nil {
		return p, err
	}
	if r.Mode != nil {
		switch *r.Mode {
		case PinningOff, PinningHold, PinningWarn:
			p.Mode = *r.Mode
		default:
			return p, keyErr("pinning.mode", "%q is not a mode: use \"hold\" (a changed or new tool is held until approved), \"warn\" (served, logged and counted) or \"off\"", *r.Mode)
		}
	}
	p.Dir, p.HoldFirstSight = r.Dir, r.HoldFirstSight
	if p.On() && p.Dir == "" && cluster.Redis == nil {
		return p, keyErr("pinning.dir", "is required with pinning.mode %q: the directory where the pins survive restarts (kept out of the workspace), e.g. \"/var/lib/toolnexus/pins\"; or set cluster.redis to keep them in Redis", p.Mode)
	}
	if p.Dir != "" && cluster.Redis != nil {
		return p, keyErr("pinning.dir", "with cluster.redis the pins live in Redis, shared by every replica; remove pinning.dir")
	}
	return p, nil
}

// PinningDir is pinning.dir resolved to an absolute path ("" when the pins
// are not kept in a directory). It must lie outside the workspace and the
// sessions' root: a model that can write files there could rewrite its own
// pins.
func (c *Config) PinningDir() (string, error) {
	if c.Pinning.Dir == "" {
		return "", nil
	}
	dir, err := filepath.Abs(c.Resolve(c.Pinning.Dir))
	if err != nil {
		return "", keyErr("pinning.dir", "%v", err)
	}
	ws, err := c.WorkspaceDir()
	if err != nil {
		return "", err
	}
	sess, err := c.SessionsRoot()
	if err != nil {
		return "", err
	}
	for _, reach := range []string{ws, sess} {
		if overlaps(dir, reach) {
			return "", keyErr("pinning.dir", "%s overlaps %s, which the model's file tools reach: a model could rewrite its own pins; put the pins outside it", dir, reach)
		}
	}
	return dir, nil
}

// overlaps reports whether a is b, or one is inside the other, comparing
// where the paths lead (a missing path is compared as written).
func overlaps(a, b string) bool {
	a, b = realPath(a), realPath(b)
	sep := string(filepath.Separator)
	return a == b || strings.HasPrefix(a, b+sep) || strings.HasPrefix(b, a+sep) || a == sep || b == sep
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func parseOverrides(raw json.RawMessage) (map[string]ToolOverride, error) {
	if raw == nil {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := strictDecode("overrides", raw, &top); err != nil {
		return nil, err
	}
	out := make(map[string]ToolOverride, len(top))
	renamedBy := map[string]string{}
	for _, name := range sortedKeys(top) {
		key := "overrides." + name
		if name == "" {
			return nil, keyErr("overrides", "a tool name may not be empty")
		}
		o, err := parseOverride(key, top[name])
		if err != nil {
			return nil, err
		}
		if o.Name != "" {
			if other, dup := renamedBy[o.Name]; dup {
				return nil, keyErr(key+".name", "%q is also the new name of %q; two tools cannot take one name", o.Name, other)
			}
			renamedBy[o.Name] = name
		}
		out[name] = o
	}
	return out, nil
}

func parseOverride(key string, raw json.RawMessage) (ToolOverride, error) {
	var o ToolOverride
	if field.IsNull(raw) {
		return o, keyErr(key, `must be an object such as {"name": "weather", "description": "...", "arguments": {"units": "metric"}}`)
	}
	var r struct {
		Name        *string                    `json:"name"`
		Description *string                    `json:"description"`
		Arguments   map[string]json.RawMessage `json:"arguments"`
	}
	if err := strictDecode(key, raw, &r); err != nil {
		return o, err
	}
	if r.Name == nil && r.Description == nil && len(r.Arguments) == 0 {
		return o, keyErr(key, "changes nothing: give a name, a description or arguments")
	}
	if r.Name != nil {
		if !validToolName.MatchString(*r.Name) {
			return o, keyErr(key+".name", "%q is not a tool name: 1 to 128 of a-z A-Z 0-9 _ -", *r.Name)
		}
		o.Name = *r.Name
	}
	o.Description = r.Description
	for _, arg := range sortedKeys(r.Arguments) {
		if arg == "" {
			return o, keyErr(key+".arguments", "an argument name may not be empty")
		}
	}
	if len(r.Arguments) > 0 {
		o.Arguments = r.Arguments
	}
	return o, nil
}

// String says what the override changes, for `--check`'s summary.
func (o ToolOverride) String() string {
	var parts []string
	if o.Name != "" {
		parts = append(parts, "renamed to "+o.Name)
	}
	if o.Description != nil {
		parts = append(parts, "new description")
	}
	if n := len(o.Arguments); n > 0 {
		parts = append(parts, fmt.Sprintf("%d fixed arguments", n))
	}
	return strings.Join(parts, ", ")
}
