package skill

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// ToolName is the name of the one tool this source publishes; its source
// label is sources.KindSkill.Name.
const ToolName = "skill"

// ToolDescription is the skill tool's description, pinned word for word
// (three paragraphs).
const ToolDescription = "Load a specialized skill when the task at hand matches one of the skills listed in the system prompt.\n" +
	"\n" +
	"Use this tool to inject the skill's instructions and resources into current conversation. The output may contain detailed workflow guidance as well as references to scripts, files, etc in the same directory as the skill.\n" +
	"\n" +
	"The skill name must match one of the skills listed in your system prompt."

const inputSchema = `{"type":"object","properties":{"name":{"type":"string","description":"The name of the skill to load"}},"required":["name"],"additionalProperties":false}`

// rendered is one loadable skill with its tool output built in advance:
// a call is a map lookup and nothing else.
type rendered struct {
	name   string
	dir    string
	output string
}

// newTool builds the skill tool over one immutable catalog. A rebuild makes
// a new tool and republishes the layer, so a call never sees a half-built
// catalog and needs no lock.
func newTool(c *catalog) tool.Tool {
	return tool.Must(tool.New(ToolName, c.run,
		tool.WithAnnotations(tool.ReadOnlyHints()),
		tool.WithSource(sources.KindSkill.Name),
		tool.WithDescription(ToolDescription),
		tool.WithInputSchema(json.RawMessage(inputSchema))))
}

func (c *catalog) run(_ context.Context, call tool.Call) tool.Result {
	var args struct {
		Name *string `json:"name"`
	}
	if err := call.Decode(&args); err != nil || args.Name == nil {
		return tool.FailureWith(tool.OutcomeInvalidArguments,
			`skill: "name" must be a string: the name of one of the skills listed in the system prompt`)
	}
	r, ok := c.byName[*args.Name]
	if !ok {
		return tool.Failure(`Skill "`+*args.Name+`" not found. Available skills: `+c.available, nil)
	}
	// A fresh map per call: the caller may add to the metadata it gets.
	return tool.Success(r.output, map[string]any{"name": r.name, "dir": r.dir})
}

// render builds the pinned output block. sample false
// drops the "sampled" note and the whole <skill_files> block (sampleLimit
// -1). With sample true and no files the block keeps one empty line, as
// the other implementations of this output do.
func render(name, body, dir string, sample bool, files []string) string {
	var b strings.Builder
	b.WriteString(`<skill_content name="` + name + "\">\n")
	b.WriteString("# Skill: " + name + "\n\n")
	b.WriteString(strings.TrimSpace(body) + "\n\n")
	b.WriteString("Base directory for this skill: " + fileURL(dir) + "\n")
	b.WriteString("Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.\n")
	if sample {
		b.WriteString("Note: file list is sampled.\n\n<skill_files>\n")
		if len(files) == 0 {
			b.WriteString("\n")
		}
		for _, f := range files {
			b.WriteString("<file>" + f + "</file>\n")
		}
		b.WriteString("</skill_files>\n")
	}
	b.WriteString("</skill_content>")
	return b.String()
}

// fileURL is dir as a file:// URL, percent-encoding what a URL path must
// (a space becomes %20), so the model can hand it to URL-aware tools.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}
