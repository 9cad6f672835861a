package skill

import (
	"io/fs"
	"os"
	"path/filepath"
)

// sampleFiles lists up to limit files under dir, as absolute paths in
// lexical walk order (a directory's entries by name, depth first), leaving
// out every SKILL.md. It shows the model what resources a skill ships
// without reading them. Like discovery it follows symlinks with a
// real-path guard and skips .git and node_modules. It is best effort: an
// unreadable corner of the tree is simply not listed.
func sampleFiles(dir string, limit int) []string {
	if limit <= 0 {
		return nil
	}
	s := sampler{limit: limit, visited: map[string]struct{}{}}
	s.walk(dir)
	return s.files
}

type sampler struct {
	limit   int
	visited map[string]struct{}
	files   []string
}

// walk reports whether the sample is full, so the caller stops early.
func (s *sampler) walk(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	if _, seen := s.visited[real]; seen {
		return false
	}
	s.visited[real] = struct{}{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(dir, name)
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			info, err := os.Stat(full)
			if err != nil {
				continue
			}
			typ = info.Mode().Type()
		}
		if typ.IsDir() {
			if name == ".git" || name == "node_modules" {
				continue
			}
			if s.walk(full) {
				return true
			}
			continue
		}
		if name == fileName {
			continue
		}
		s.files = append(s.files, full)
		if len(s.files) >= s.limit {
			return true
		}
	}
	return false
}
