// Package patch parses the apply_patch format models write (a Begin/End
// Patch envelope of Add, Update and Delete blocks) and applies an Update's
// hunks to a file's text. It only reads and returns text: paths are checked
// and files touched by the builtin apply_patch tool.
package patch

import (
	"errors"
	"strings"
)

// The apply_patch grammar:
//
//	*** Begin Patch
//	*** Add File: PATH
//	+a line of the new file
//	*** Update File: PATH
//	@@ optional text
//	 a context line (in the old and the new text)
//	-a line of the old text
//	+a line of the new text
//	*** Delete File: PATH
//	*** End Patch
//
// Blank lines before Begin Patch and between blocks are ignored, as is
// everything after End Patch. In an Add block a line without its "+" is
// taken as is; in an Update block a line without a prefix is context (models
// often drop the leading space of an empty context line), and a
// "*** End of File" marker is accepted and ignored. A Delete block has no
// body.

// The kinds of file operation.
const (
	OpAdd    = "add"
	OpUpdate = "update"
	OpDelete = "delete"
)

// FileOp is one file operation of a patch.
type FileOp struct {
	Kind string // OpAdd, OpUpdate or OpDelete
	Path string // as written in the patch
	// Content is the new file's text (OpAdd): the block's lines without
	// their "+", joined by "\n".
	Content string
	// Hunks are the changes of an OpUpdate, in order.
	Hunks []Hunk
}

// Hunk replaces the text Old (lines joined by "\n") with New. An empty Old
// appends New at the end of the file.
type Hunk struct {
	Old string
	New string
}

// Error is a patch that cannot be parsed; its text is what the model
// reads after "apply_patch: ".
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

var (
	errNoBegin = &Error{"missing '*** Begin Patch'"}
	errNoEnd   = &Error{"missing '*** End Patch'"}
)

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	eofMarker    = "*** End of File"
	addHeader    = "*** Add File: "
	updateHeader = "*** Update File: "
	deleteHeader = "*** Delete File: "
)

// Parse parses a patch in the grammar above.
func Parse(text string) ([]FileOp, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != beginMarker {
		return nil, errNoBegin
	}
	i++
	var ops []FileOp
	for i < len(lines) {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == endMarker {
			if len(ops) == 0 {
				return nil, &Error{"the patch has no file operations"}
			}
			return ops, nil
		}
		if trimmed == "" {
			i++
			continue
		}
		kind, path, ok := fileHeader(line)
		if !ok {
			return nil, unexpected(line)
		}
		i++
		start := i
		for i < len(lines) && strings.TrimSpace(lines[i]) != endMarker {
			if _, _, ok := fileHeader(lines[i]); ok {
				break
			}
			i++
		}
		body := lines[start:i]
		op := FileOp{Kind: kind, Path: path}
		switch kind {
		case OpAdd:
			content := make([]string, len(body))
			for j, l := range body {
				content[j] = strings.TrimPrefix(l, "+")
			}
			op.Content = strings.Join(content, "\n")
		case OpUpdate:
			op.Hunks = parseHunks(body)
		case OpDelete:
			for _, l := range body {
				if strings.TrimSpace(l) != "" {
					return nil, unexpected(l)
				}
			}
		}
		ops = append(ops, op)
	}
	return nil, errNoEnd
}

func unexpected(line string) error { return &Error{"unexpected line: " + line} }

func fileHeader(line string) (kind, path string, ok bool) {
	for _, h := range [...]struct{ prefix, kind string }{
		{addHeader, OpAdd}, {updateHeader, OpUpdate}, {deleteHeader, OpDelete},
	} {
		if rest, found := strings.CutPrefix(line, h.prefix); found {
			path = strings.TrimSpace(rest)
			return h.kind, path, path != ""
		}
	}
	return "", "", false
}

// parseHunks splits an Update block at its "@@" lines.
func parseHunks(body []string) []Hunk {
	var hunks []Hunk
	var old, cur []string
	started := false
	flush := func() {
		if started && (len(old) > 0 || len(cur) > 0) {
			hunks = append(hunks, Hunk{Old: strings.Join(old, "\n"), New: strings.Join(cur, "\n")})
		}
		old, cur = nil, nil
	}
	for _, l := range body {
		switch {
		case strings.HasPrefix(l, "@@"):
			flush()
			started = true
			continue
		case strings.TrimSpace(l) == eofMarker:
			continue
		}
		started = true
		switch {
		case strings.HasPrefix(l, "-"):
			old = append(old, l[1:])
		case strings.HasPrefix(l, "+"):
			cur = append(cur, l[1:])
		case strings.HasPrefix(l, " "):
			old = append(old, l[1:])
			cur = append(cur, l[1:])
		default:
			old = append(old, l)
			cur = append(cur, l)
		}
	}
	flush()
	return hunks
}

// Apply applies an Update's hunks to content in order. Each hunk's old
// text is looked for after the previous hunk first, then anywhere, so hunks
// given out of order still apply.
func Apply(content string, hunks []Hunk) (string, error) {
	cursor := 0
	for _, h := range hunks {
		if h.Old == "" {
			if content != "" && !strings.HasSuffix(content, "\n") {
				content += "\n"
			}
			content += h.New
			cursor = len(content)
			continue
		}
		idx := strings.Index(content[cursor:], h.Old)
		if idx >= 0 {
			idx += cursor
		} else if idx = strings.Index(content, h.Old); idx < 0 {
			return "", ErrMismatch
		}
		content = content[:idx] + h.New + content[idx+len(h.Old):]
		cursor = idx + len(h.New)
	}
	return content, nil
}

// ErrMismatch is a hunk whose old text is not in the file.
var ErrMismatch = errors.New("hunk does not match file contents")
