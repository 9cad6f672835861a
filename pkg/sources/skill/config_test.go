package skill_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

func TestParseConfig(t *testing.T) {
	cases := []struct {
		in   string
		want skill.Config
	}{
		{``, skill.Config{}},
		{`null`, skill.Config{}},
		{`[]`, skill.Config{Dirs: []string{}}},
		{`["./skills", "/opt/skills"]`, skill.Config{Dirs: []string{"./skills", "/opt/skills"}}},
		{`{}`, skill.Config{}},
		{`{"dirs": ["a"], "tools": {"x": true, "y": false}, "sampleLimit": 2}`,
			skill.Config{Dirs: []string{"a"}, Tools: sources.Filter{"x": true, "y": false}, SampleLimit: 2}},
		{`{"dirs": null, "tools": null, "sampleLimit": null}`, skill.Config{}},
		{`{"sampleLimit": -1}`, skill.Config{SampleLimit: -1}},
		{`{"sampleLimit": 3.0}`, skill.Config{SampleLimit: 3}},
	}
	for _, c := range cases {
		got, warns, err := skill.ParseConfig(json.RawMessage(c.in))
		if err != nil || len(warns) != 0 {
			t.Errorf("%s: err %v, warnings %v", c.in, err, warns)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"./skills"`, `must be a list of directories (["./skills"]) or an object {"dirs": ["./skills"], "tools": {"name": true}, "sampleLimit": 10}`},
		{`42`, `must be a list of directories (["./skills"]) or an object {"dirs": ["./skills"], "tools": {"name": true}, "sampleLimit": 10}`},
		{`["a", 7]`, `dirs[1]: must be a string (a directory path)`},
		{`["a", null]`, `dirs[1]: must be a string (a directory path)`},
		{`["  "]`, `dirs[0]: must not be empty; give a directory path or remove the entry`},
		{`{"dirs": "a"}`, `dirs: must be a list of directory paths, e.g. ["./skills"]`},
		{`{"dirs": ["a", {}]}`, `dirs[1]: must be a string (a directory path)`},
		{`{"dir": ["a"]}`, `dir: unknown key; the known keys are dirs, tools and sampleLimit`},
		{`{"tools": ["a"]}`, `tools: must be an object mapping skill names to true or false, e.g. {"code-review": true}`},
		{`{"tools": {"a": "yes"}}`, `tools.a: must be true or false`},
		{`{"sampleLimit": "10"}`, `sampleLimit: must be an integer: -1 (no file list), 0 (the default, 10) or a positive cap`},
		{`{"sampleLimit": 1.5}`, `sampleLimit: must be an integer: -1 (no file list), 0 (the default, 10) or a positive cap`},
		{`{"sampleLimit": -2}`, `sampleLimit: must be an integer: -1 (no file list), 0 (the default, 10) or a positive cap`},
	}
	for _, c := range cases {
		_, _, err := skill.ParseConfig(json.RawMessage(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got  %v\n want %s", c.in, err, c.want)
		}
	}
}
