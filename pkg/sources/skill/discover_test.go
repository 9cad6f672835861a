package skill_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

func TestFrontmatter(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"folded/SKILL.md":     "---\nname: folded\ndescription: >\n  Folded text\n  joins lines.\n---\nFolded body.\n",
		"literal/SKILL.md":    "---\nname: literal\ndescription: |\n  Line one\n  Line two\n---\nLiteral body.\n",
		"quoted/SKILL.md":     "---\nname: \"quoted: yes\"\ndescription: '  It''s quoted  '\n---\nQuoted body.\n",
		"number/SKILL.md":     "---\nname: 2024\ndescription: true\nversion: [1, 2]\n---\nScalars are strings.\n",
		"crlf/SKILL.md":       "\ufeff---\r\nname:   crlf  \r\ndescription: Windows line endings.\r\n---\r\nCRLF body.\r\n",
		"anchor/SKILL.md":     "---\nbase: &b Shared description.\nname: anchor\ndescription: *b\n---\nAnchored.\n",
		"bad-yaml/SKILL.md":   "---\nname: [unclosed\n---\nbody\n",
		"no-close/SKILL.md":   "---\nname: no-close\ndescription: never closed\n",
		"not-map/SKILL.md":    "---\n- a list\n---\nbody\n",
		"name-list/SKILL.md":  "---\nname: [a, b]\n---\nbody\n",
		"no-name/SKILL.md":    "---\ndescription: Nameless.\n---\nbody\n",
		"twice/SKILL.md":      "---\nname: a\nname: b\n---\nbody\n",
		"empty-name/SKILL.md": "---\nname: \"  \"\n---\nbody\n",
		"no-front/SKILL.md":   "# Just markdown\n",
		"dup-a/SKILL.md":      skillMD("dup", "First one.", "first"),
		"dup-b/SKILL.md":      skillMD("dup", "Second one.", "second"),
	}
	for p, c := range files {
		write(t, filepath.Join(root, p), c)
	}
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	skills, skipped := f.src.Inventory()

	wantDesc := map[string]string{
		"2024":        "true",
		"anchor":      "Shared description.",
		"crlf":        "Windows line endings.",
		"dup":         "First one.",
		"folded":      "Folded text joins lines.",
		"literal":     "Line one\nLine two",
		"quoted: yes": "It's quoted",
	}
	if len(skills) != len(wantDesc) {
		t.Errorf("loaded %v, want %d skills", f.names(), len(wantDesc))
	}
	for i, s := range skills {
		if i > 0 && skills[i-1].Name >= s.Name {
			t.Errorf("inventory not sorted by name: %v", f.names())
		}
		want, ok := wantDesc[s.Name]
		if !ok || s.Description != want {
			t.Errorf("skill %q: description %q, want %q (known: %v)", s.Name, s.Description, want, ok)
		}
		if filepath.Base(s.Path) != "SKILL.md" || filepath.Dir(s.Path) != s.Dir {
			t.Errorf("skill %q: dir %q path %q", s.Name, s.Dir, s.Path)
		}
	}
	if s := skills[0]; s.Dir != filepath.Join(root, "number") {
		t.Errorf("first skill %q from %q, want the number folder", s.Name, s.Dir)
	}

	wantSkip := map[string]string{
		"bad-yaml":   skill.ReasonMalformedFrontmatter,
		"no-close":   skill.ReasonMalformedFrontmatter,
		"not-map":    skill.ReasonMalformedFrontmatter,
		"name-list":  skill.ReasonMalformedFrontmatter,
		"no-name":    skill.ReasonMissingName,
		"twice":      skill.ReasonMalformedFrontmatter,
		"empty-name": skill.ReasonMissingName,
		"no-front":   skill.ReasonMissingName,
		"dup-b":      skill.ReasonDuplicateName,
	}
	if len(skipped) != len(wantSkip) {
		t.Errorf("skipped %+v, want %d entries", skipped, len(wantSkip))
	}
	for i, s := range skipped {
		dir := filepath.Base(filepath.Dir(s.Path))
		if wantSkip[dir] != s.Reason {
			t.Errorf("%s skipped as %q, want %q (%s)", dir, s.Reason, wantSkip[dir], s.Detail)
		}
		if s.Detail == "" {
			t.Errorf("%s: skip without detail", dir)
		}
		if i > 0 && skipped[i-1].Path >= s.Path {
			t.Errorf("skipped entries not in walk order: %s then %s", skipped[i-1].Path, s.Path)
		}
		if !strings.Contains(f.log.String(), s.Path) {
			t.Errorf("skip of %s not logged", s.Path)
		}
	}
	for _, s := range skipped {
		if s.Reason == skill.ReasonDuplicateName && !strings.Contains(s.Detail, filepath.Join(root, "dup-a", "SKILL.md")) {
			t.Errorf("duplicate detail should name the winner: %q", s.Detail)
		}
	}

	// The body is what follows the closing fence, trimmed; CRLF and the BOM
	// do not leak into the name.
	if out := f.load("crlf").Output; !strings.Contains(out, "# Skill: crlf\n\nCRLF body.\n\n") {
		t.Errorf("crlf output:\n%q", out)
	}
	if out := f.load("dup").Output; !strings.Contains(out, "\n\nfirst\n\n") {
		t.Errorf("first duplicate must win:\n%s", out)
	}
}

func TestDuplicateAcrossRootsFirstRootWins(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, filepath.Join(a, "z", "SKILL.md"), skillMD("same", "From a.", "a"))
	write(t, filepath.Join(b, "a", "SKILL.md"), skillMD("same", "From b.", "b"))
	f := start(t, skill.Config{Dirs: []string{a, b}}, "")
	skills, skipped := f.src.Inventory()
	if len(skills) != 1 || skills[0].Description != "From a." {
		t.Errorf("skills = %+v, want the one from the first root", skills)
	}
	if len(skipped) != 1 || skipped[0].Reason != skill.ReasonDuplicateName || skipped[0].Path != filepath.Join(b, "a", "SKILL.md") {
		t.Errorf("skipped = %+v", skipped)
	}
}

func TestSymlinkedSkillDirectory(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	elsewhere := filepath.Join(base, "elsewhere", "deploy")
	write(t, filepath.Join(elsewhere, "SKILL.md"), skillMD("deploy", "Deploy the app.", "Run scripts/deploy.sh."))
	write(t, filepath.Join(elsewhere, "scripts", "deploy.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(root, "local", "SKILL.md"), skillMD("local", "A plain one.", "Local."))
	symlink(t, elsewhere, filepath.Join(root, "linked"))
	// A symlinked SKILL.md file counts too.
	write(t, filepath.Join(base, "shared", "notes.md"), skillMD("file-link", "Linked file.", "Via a file link."))
	symlink(t, filepath.Join(base, "shared", "notes.md"), filepath.Join(root, "filelink", "SKILL.md"))

	f := start(t, skill.Config{Dirs: []string{root}}, "")
	if got := join(f.names()); got != "deploy,file-link,local" {
		t.Fatalf("skills = %s", got)
	}
	linked := filepath.Join(root, "linked")
	res := f.load("deploy")
	if res.Metadata["dir"] != linked {
		t.Errorf("dir = %v, want the link's path %s", res.Metadata["dir"], linked)
	}
	if !strings.Contains(res.Output, "<file>"+filepath.Join(linked, "scripts", "deploy.sh")+"</file>") {
		t.Errorf("files are listed under the link's path:\n%s", res.Output)
	}
}

func TestSymlinkCycle(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a", "A.", "a"))
	write(t, filepath.Join(root, "a", "ref.md"), "ref")
	symlink(t, root, filepath.Join(root, "a", "loop"))             // back to the root
	symlink(t, "..", filepath.Join(root, "a", "up"))               // relative, to its parent
	symlink(t, "self", filepath.Join(root, "self"))                // a link to itself
	symlink(t, filepath.Join(root, "a"), filepath.Join(root, "b")) // an alias of a

	f := start(t, skill.Config{Dirs: []string{root}}, "")
	skills, skipped := f.src.Inventory()
	if len(skills) != 1 || skills[0].Dir != filepath.Join(root, "a") {
		t.Errorf("skills = %+v, want a once", skills)
	}
	if len(skipped) != 0 {
		t.Errorf("a directory reached twice is walked once, not reported: %+v", skipped)
	}
	out := f.load("a").Output
	if n := strings.Count(out, "<file>"); n != 1 || !strings.Contains(out, filepath.Join(root, "a", "ref.md")) {
		t.Errorf("the file sample must not loop:\n%s", out)
	}
}

func TestSkipsGitAndNodeModules(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "hooks", "SKILL.md"), skillMD("git", "No.", "x"))
	write(t, filepath.Join(root, "pkg", "node_modules", "dep", "SKILL.md"), skillMD("dep", "No.", "x"))
	write(t, filepath.Join(root, "pkg", "SKILL.md"), skillMD("pkg", "Yes.", "x"))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	if got := join(f.names()); got != "pkg" {
		t.Errorf("skills = %s, want only pkg", got)
	}
}

func TestUnreadable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "ok", "SKILL.md"), skillMD("ok", "Fine.", "x"))
	broken := filepath.Join(root, "broken", "SKILL.md")
	symlink(t, filepath.Join(root, "missing.md"), broken)
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	_, skipped := f.src.Inventory()
	if len(skipped) != 1 || skipped[0].Path != broken || skipped[0].Reason != skill.ReasonUnreadable {
		t.Errorf("skipped = %+v", skipped)
	}
	if strings.Count(skipped[0].Detail, root) != 0 {
		t.Errorf("detail repeats the path: %q", skipped[0].Detail)
	}
}

func TestMissingDirectoryIsAWarning(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "real", "x", "SKILL.md"), skillMD("x", "X.", "x"))
	write(t, filepath.Join(root, "plain.txt"), "not a dir")
	f := start(t, skill.Config{Dirs: []string{"gone", "plain.txt", "real"}}, root)
	if got := join(f.names()); got != "x" {
		t.Errorf("skills = %s", got)
	}
	logs := f.log.String()
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, filepath.Join(root, "gone")) || !strings.Contains(logs, filepath.Join(root, "plain.txt")) {
		t.Errorf("missing and non-directory roots must be warned about:\n%s", logs)
	}
	if st := f.src.Status(); st.State != "connected" || st.Error != "" {
		t.Errorf("status = %+v", st)
	}
}

func TestRelativeDirsResolveAgainstBaseDir(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "skills", "x", "SKILL.md"), skillMD("x", "X.", "x"))
	src := skill.New(skill.Config{Dirs: []string{"./skills", "/abs/elsewhere"}}, sourcesEnv(base))
	if got := join(src.Dirs()); got != filepath.Join(base, "skills")+",/abs/elsewhere" {
		t.Errorf("dirs = %s", got)
	}
	f := start(t, skill.Config{Dirs: []string{"skills"}}, base)
	if got := join(f.names()); got != "x" {
		t.Errorf("skills = %s", got)
	}
	// Without a base dir, relative means the working directory.
	wd, _ := os.Getwd()
	if got := join(skill.New(skill.Config{Dirs: []string{"s"}}, sourcesEnv("")).Dirs()); got != filepath.Join(wd, "s") {
		t.Errorf("dirs = %s", got)
	}
}

func TestHomeDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, filepath.Join(home, ".skills", "h", "SKILL.md"), skillMD("h", "Home skill.", "x"))
	f := start(t, skill.Config{Dirs: []string{"~/.skills"}}, t.TempDir())
	if got := join(f.src.Dirs()); got != filepath.Join(home, ".skills") {
		t.Errorf("dirs = %s", got)
	}
	if got := join(f.names()); got != "h" {
		t.Errorf("skills = %s", got)
	}
}
