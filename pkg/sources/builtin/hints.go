package builtin

import "github.com/toolnexus/toolnexus/pkg/tool"

// hints say what each builtin does to the workspace and the world, for a
// client that asks a person before anything changes: the file readers only
// read; bash and the file writers may overwrite or delete; webfetch reads
// the internet; question and todowrite change nothing outside the call.
func hints(name string) *tool.Annotations {
	switch name {
	case "read", "glob", "grep", "question":
		return tool.ReadOnlyHints()
	case "bash", "write", "edit", "apply_patch":
		return tool.DestructiveHints()
	case "webfetch":
		return tool.OpenWorldHints()
	case "todowrite":
		f := false
		return &tool.Annotations{ReadOnly: &f, Destructive: &f}
	}
	return nil
}
