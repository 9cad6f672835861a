package skill

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// fileName is the file that makes a directory a skill.
const fileName = "SKILL.md"

// Skill is one loaded skill, as Inventory and ListSkills show it.
type Skill struct {
	// Name is the frontmatter name, trimmed; what the skill tool is called with.
	Name string
	// Description is the frontmatter description, trimmed; may be empty.
	Description string
	// Dir is the absolute directory holding the SKILL.md, as reached from
	// the configured root (a symlinked skill keeps the link's path, which is
	// where the operator put it).
	Dir string
	// Path is the absolute path of the SKILL.md.
	Path string
}

// Skipped is a SKILL.md (or a directory) that was not loaded.
type Skipped struct {
	// Path is the absolute path of the SKILL.md, or of a directory that
	// could not be read.
	Path string
	// Reason is one of missing-name, malformed-frontmatter, duplicate-name,
	// unreadable.
	Reason string
	// Detail says what exactly is wrong, for a person to fix it.
	Detail string
}

// found is a parsed skill before filtering, with its body.
type found struct {
	Skill
	body string
}

// walker finds SKILL.md files under the roots. Every directory is entered
// at most once, keyed by its real path: that stops symlink cycles and also
// keeps a directory reachable by two links from yielding the same skills
// twice.
type walker struct {
	ctx     context.Context
	log     *slog.Logger
	visited map[string]struct{}
	first   map[string]string // skill name -> path of the SKILL.md that won it
	found   []found
	skipped []Skipped
}

// discover walks the roots in order, each in lexical order, so which of two
// same-named skills wins is stable from run to run. A missing root is a
// warning, not a failure: a fresh checkout may not have every directory.
// The only error is ctx's.
func discover(ctx context.Context, roots []string, log *slog.Logger) ([]found, []Skipped, error) {
	w := &walker{ctx: ctx, log: log, visited: map[string]struct{}{}, first: map[string]string{}}
	for _, root := range roots {
		info, err := os.Stat(root)
		if err != nil {
			log.Warn("skills directory not found; no skills from it", "dir", root, "error", errText(err))
			continue
		}
		if !info.IsDir() {
			log.Warn("skills path is not a directory; no skills from it", "dir", root)
			continue
		}
		if err := w.dir(root); err != nil {
			return nil, nil, err
		}
	}
	return w.found, w.skipped, nil
}

func (w *walker) dir(path string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		w.skip(path, ReasonUnreadable, "cannot resolve the directory: "+errText(err))
		return nil
	}
	if _, seen := w.visited[real]; seen {
		return nil
	}
	w.visited[real] = struct{}{}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		w.skip(path, ReasonUnreadable, "cannot list the directory: "+errText(err))
		// ReadDir returns what it could read before the error; use it.
	}
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(path, name)
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			info, err := os.Stat(full)
			if err != nil {
				if name == fileName {
					w.skip(full, ReasonUnreadable, "broken symbolic link: "+errText(err))
				}
				continue
			}
			typ = info.Mode().Type()
		}
		switch {
		case typ.IsDir():
			if name == ".git" || name == "node_modules" {
				continue
			}
			if err := w.dir(full); err != nil {
				return err
			}
		case name == fileName && typ.IsRegular():
			w.file(full)
		}
	}
	return nil
}

func (w *walker) file(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		w.skip(path, ReasonUnreadable, errText(err))
		return
	}
	doc, err := parseDocument(data)
	if err != nil {
		var pe *parseError
		if errors.As(err, &pe) {
			w.skip(path, pe.reason, pe.detail)
		} else {
			w.skip(path, ReasonMalformedFrontmatter, err.Error())
		}
		return
	}
	if prev, dup := w.first[doc.name]; dup {
		w.skip(path, ReasonDuplicateName, fmt.Sprintf("skill %q is already loaded from %s; rename one of them", doc.name, prev))
		return
	}
	w.first[doc.name] = path
	w.found = append(w.found, found{
		Skill: Skill{Name: doc.name, Description: doc.description, Dir: filepath.Dir(path), Path: path},
		body:  doc.body,
	})
}

func (w *walker) skip(path, reason, detail string) {
	w.log.Warn("skill skipped", "path", path, "reason", reason, "detail", detail)
	w.skipped = append(w.skipped, Skipped{Path: path, Reason: reason, Detail: detail})
}

// errText drops the path from an *fs.PathError: every caller already
// reports the path next to it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
