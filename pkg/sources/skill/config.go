package skill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// DefaultSampleLimit is how many files the skill tool lists when the config
// does not say.
const DefaultSampleLimit = 10

// NoSample as sampleLimit drops the file list (and its "sampled" note) from
// the skill tool's output.
const NoSample = -1

// Config is the `skills` section.
type Config struct {
	// Dirs are the roots searched for SKILL.md files, in order; a relative
	// one resolves against Env.BaseDir. Earlier roots win duplicate names.
	Dirs []string `json:"dirs"`
	// Tools filters skills by name with the usual rule: empty keeps all, any
	// true makes it an allowlist, only false entries make it a drop-list.
	Tools sources.Filter `json:"tools,omitempty"`
	// SampleLimit caps the files listed per skill: 0 means
	// DefaultSampleLimit, n > 0 lists at most n, NoSample (-1) lists none.
	SampleLimit int `json:"sampleLimit,omitempty"`
}

// sampleCap is the effective file-list cap: 0 for "no list".
func (c Config) sampleCap() int {
	switch {
	case c.SampleLimit == 0:
		return DefaultSampleLimit
	case c.SampleLimit < 0:
		return 0
	}
	return c.SampleLimit
}

const shapeHint = `must be a list of directories (["./skills"]) or an object {"dirs": ["./skills"], "tools": {"name": true}, "sampleLimit": 10}`

// ParseConfig reads the `skills` section: a JSON list of directories, or an
// object {dirs, tools, sampleLimit}. An absent or null section means no
// directories. Errors name the key path inside the section (the caller adds
// the section name) and say how to fix it; there are no warnings yet, since
// unknown names in the tools filter can only be told once the skills are
// discovered (they are logged then).
func ParseConfig(raw json.RawMessage) (Config, []string, error) {
	var cfg Config
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return cfg, nil, nil
	}
	switch raw[0] {
	case '[':
		dirs, err := parseDirs(raw)
		if err != nil {
			return Config{}, nil, err
		}
		cfg.Dirs = dirs
		return cfg, nil, nil
	case '{':
	default:
		return Config{}, nil, field.Errorf("", "%s", shapeHint)
	}

	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Config{}, nil, field.Errorf("", "is not valid JSON (%v); it %s", err, shapeHint)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := obj[k]
		switch k {
		case "dirs":
			dirs, err := parseDirs(v)
			if err != nil {
				return Config{}, nil, err
			}
			cfg.Dirs = dirs
		case "tools":
			f, err := parseFilter(v)
			if err != nil {
				return Config{}, nil, err
			}
			cfg.Tools = f
		case "sampleLimit":
			n, err := parseSampleLimit(v)
			if err != nil {
				return Config{}, nil, err
			}
			cfg.SampleLimit = n
		default:
			// A typo such as "dir" must not silently leave the agent without
			// skills.
			return Config{}, nil, field.Errorf(k, "unknown key; the known keys are dirs, tools and sampleLimit")
		}
	}
	return cfg, nil, nil
}

func parseDirs(raw json.RawMessage) ([]string, error) {
	if field.IsNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, field.Errorf("dirs", `must be a list of directory paths, e.g. ["./skills"]`)
	}
	dirs := make([]string, 0, len(items))
	for i, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err != nil || field.IsNull(it) {
			return nil, field.Errorf(fmt.Sprintf("dirs[%d]", i), "must be a string (a directory path)")
		}
		if strings.TrimSpace(s) == "" {
			return nil, field.Errorf(fmt.Sprintf("dirs[%d]", i), "must not be empty; give a directory path or remove the entry")
		}
		dirs = append(dirs, s)
	}
	return dirs, nil
}

func parseFilter(raw json.RawMessage) (sources.Filter, error) {
	if field.IsNull(raw) {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, field.Errorf("tools", `must be an object mapping skill names to true or false, e.g. {"code-review": true}`)
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	f := make(sources.Filter, len(obj))
	for _, name := range names {
		var b bool
		if err := json.Unmarshal(obj[name], &b); err != nil || field.IsNull(obj[name]) {
			return nil, field.Errorf("tools."+name, "must be true or false")
		}
		f[name] = b
	}
	return f, nil
}

func parseSampleLimit(raw json.RawMessage) (int, error) {
	const fix = "must be an integer: -1 (no file list), 0 (the default, 10) or a positive cap"
	if field.IsNull(raw) {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, field.Errorf("sampleLimit", "%s", fix)
	}
	if f != math.Trunc(f) || f < NoSample || f > math.MaxInt32 {
		return 0, field.Errorf("sampleLimit", "%s", fix)
	}
	return int(f), nil
}
