package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/patch"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

type applyPatchArgs struct {
	PatchText string `json:"patchText"`
}

// fileState is a file as the patch leaves it, while the patch is checked.
type fileState struct {
	path    string // as written in the patch (first mention)
	rel     string // beneath the workspace root
	existed bool   // on disk before the patch
	exists  bool   // after the operations so far
	content string
}

// applyPatch checks every operation against the files before it changes
// anything, then writes: all new contents go to temporary files first and
// are renamed into place only when every one of them was written, so a
// failing hunk, a missing file or a full disk leaves the workspace as it was.
func (t *toolset) applyPatch(ctx context.Context, c tool.Call) tool.Result {
	var a applyPatchArgs
	if r := decodeArgs("apply_patch", c, &a); r != nil {
		return *r
	}
	if a.PatchText == "" {
		return *invalid("apply_patch: patchText is required")
	}
	ops, err := patch.Parse(a.PatchText)
	if err != nil {
		return fail("apply_patch: %s", err.Error())
	}

	files := map[string]*fileState{}
	var order []*fileState
	counts := map[string]int{}
	var root *os.Root
	for _, op := range ops {
		dir, rel, r := t.at("apply_patch", op.Path)
		if r != nil {
			return *r
		}
		root = dir
		st, seen := files[rel]
		if !seen {
			var res *tool.Result
			if st, res = loadState(root, op.Path, rel); res != nil {
				return *res
			}
			files[rel] = st
			order = append(order, st)
		}
		switch op.Kind {
		case patch.OpAdd:
			if st.exists {
				return fail("apply_patch: file already exists: %s", op.Path)
			}
			st.exists, st.content = true, op.Content
		case patch.OpUpdate:
			if !st.exists {
				return fail("apply_patch: file not found: %s", op.Path)
			}
			next, err := patch.Apply(st.content, op.Hunks)
			if err != nil {
				return tool.Failure("apply_patch: "+err.Error(), map[string]any{"path": op.Path})
			}
			st.content = next
		case patch.OpDelete:
			if !st.exists {
				return fail("apply_patch: file not found: %s", op.Path)
			}
			st.exists, st.content = false, ""
		}
		counts[op.Kind]++
	}
	if ctx.Err() != nil {
		return tool.ContextResult(ctx, "apply_patch")
	}
	if r := t.grow("apply_patch", patchGrowth(root, order)); r != nil {
		return *r
	}
	if err := commit(root, order, t.owner()); err != nil {
		if escapedRoot(err) {
			return escaped("apply_patch: path escapes the workspace: %v; no file was changed", err)
		}
		return fail("apply_patch: %v; no file was changed", err)
	}
	unit := "file operations"
	if len(ops) == 1 {
		unit = "file operation"
	}
	return tool.Success(fmt.Sprintf("Applied patch: %d %s", len(ops), unit), map[string]any{
		"added": counts[patch.OpAdd], "updated": counts[patch.OpUpdate], "deleted": counts[patch.OpDelete],
	})
}

func loadState(root *os.Root, path, rel string) (*fileState, *tool.Result) {
	st := &fileState{path: path, rel: rel}
	f, _, r := openRegular(root, "apply_patch", path, rel)
	if r != nil {
		if _, err := root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
			return st, nil
		}
		return nil, r
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		r := fail("apply_patch: cannot read %s: %s", path, osReason(err))
		return nil, &r
	}
	st.existed, st.exists, st.content = true, true, string(data)
	return st, nil
}

// commit writes the final states beneath root: every new content is
// staged in a temporary file beside its target first; only when all are
// staged are they renamed into place and the deleted files removed. A
// staging failure removes the temporaries and any directory it created.
func commit(root *os.Root, files []*fileState, own fileOwner) (err error) {
	var staged []string // temp names, parallel to writes
	var writes []*fileState
	var madeDirs []string
	defer func() {
		if err == nil {
			return
		}
		for _, tmp := range staged {
			root.Remove(tmp)
		}
		for i := len(madeDirs) - 1; i >= 0; i-- {
			root.Remove(madeDirs[i])
		}
	}()
	for _, st := range files {
		if !st.exists {
			continue
		}
		dirs, err := mkdirAllTracked(root, path.Dir(st.rel))
		madeDirs = append(madeDirs, dirs...)
		if err == nil {
			err = own.dirs(root, dirs)
		}
		if err != nil {
			return fmt.Errorf("cannot create the directory for %s: %s", st.path, osReason(err))
		}
		tmp, err := stageFile(root, st.rel, []byte(st.content), own)
		if err != nil {
			if escapedRoot(err) {
				return err
			}
			return fmt.Errorf("cannot write %s: %s", st.path, osReason(err))
		}
		staged = append(staged, tmp)
		writes = append(writes, st)
	}
	for i, st := range writes {
		if err := root.Rename(staged[i], st.rel); err != nil {
			// Rename within one directory fails only on a broken
			// filesystem or a swapped path; what was renamed already
			// stays.
			for _, tmp := range staged[i:] {
				root.Remove(tmp)
			}
			staged = nil
			return fmt.Errorf("cannot replace %s: %s", st.path, osReason(err))
		}
	}
	for _, st := range files {
		if st.existed && !st.exists {
			if err := root.Remove(st.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("cannot delete %s: %s", st.path, osReason(err))
			}
		}
	}
	return nil
}

// mkdirAllTracked is MkdirAll beneath root that reports the directories it
// created, outermost first, so they can be removed again.
func mkdirAllTracked(root *os.Root, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		if _, err := root.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	slices.Reverse(missing)
	return missing, nil
}
