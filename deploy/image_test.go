package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dockerfile is the repository's Dockerfile as instructions: one entry per
// logical line (continuations joined), comments dropped.
func dockerfile(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && cur == "") {
			continue
		}
		if c, ok := strings.CutSuffix(l, "\\"); ok {
			cur += c + " "
			continue
		}
		cur += l
		if f := strings.Fields(cur); len(f) > 0 {
			out = append(out, f)
		}
		cur = ""
	}
	return out
}

// TestDockerfileMatchesTheManifests keeps the image and the Kubernetes
// files in step: the user, the ports, where the skills live.
func TestDockerfileMatchesTheManifests(t *testing.T) {
	ins := dockerfile(t)
	var froms, exposed, copies []string
	var user, run, env string
	for _, in := range ins {
		switch strings.ToUpper(in[0]) {
		case "FROM":
			froms = append(froms, in[len(in)-1])
			if len(in) >= 4 && strings.EqualFold(in[len(in)-2], "AS") {
				froms[len(froms)-1] = in[len(in)-3]
			}
		case "EXPOSE":
			exposed = append(exposed, in[1:]...)
		case "USER":
			user = in[1]
		case "RUN":
			run += strings.Join(in, " ") + "\n"
		case "ENV":
			env += strings.Join(in[1:], " ") + " "
		case "COPY":
			copies = append(copies, strings.Join(in[1:], " "))
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[0], "golang:") {
		t.Errorf("FROM %v; want a golang builder stage and a runtime stage", froms)
	}
	if final := froms[len(froms)-1]; !strings.Contains(final, "distroless") && final != "scratch" {
		t.Errorf("runtime stage FROM %s; want distroless or scratch", final)
	}
	if !strings.Contains(run, "CGO_ENABLED=0") || !strings.Contains(run, "./cmd/server") {
		t.Error("the builder must build ./cmd/server with CGO_ENABLED=0 (a static binary)")
	}
	uid, err := strconv.Atoi(strings.Split(user, ":")[0])
	if err != nil || uid == 0 {
		t.Errorf("USER %q; want a numeric non-root user (runAsNonRoot can only verify numbers)", user)
	}

	objs, _ := manifests(t)
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	if got := dep.Spec.Template.Spec.SecurityContext.RunAsUser; got != uid {
		t.Errorf("Deployment runAsUser %d, Dockerfile USER %d; keep them the same", got, uid)
	}
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		if !slices.Contains(exposed, strconv.Itoa(p.ContainerPort)) {
			t.Errorf("container port %s %d is not EXPOSEd (EXPOSE %v)", p.Name, p.ContainerPort, exposed)
		}
	}
	for _, want := range []string{"TOOLNEXUS_LISTEN=0.0.0.0:50051", "TOOLNEXUS_METRICS_LISTEN=0.0.0.0:9464", "TOOLNEXUS_WORKSPACE=/workspace"} {
		if !strings.Contains(env, want) {
			t.Errorf("ENV lacks %s", want)
		}
	}
	cm := decode[configMap](t, objs, "ConfigMap/toolnexus-config")
	if !slices.ContainsFunc(copies, func(c string) bool { return strings.HasSuffix(c, "/src/skills /app/skills") }) ||
		!strings.Contains(cm.Data["toolnexus.json"], `"/app/skills"`) {
		t.Errorf("the image copies skills/ to /app/skills and the ConfigMap reads them there (COPY %v)", copies)
	}
	if _, err := os.Stat("../skills"); err != nil {
		t.Errorf("the Dockerfile copies skills/: %v", err)
	}
}

// TestDockerignoreKeepsTheBuildInputs guards against excluding what the
// build needs.
func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	data, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd", "pkg", "internal", "gen", "skills"} {
		for _, p := range patterns {
			if m, _ := filepath.Match(p, need); m {
				t.Errorf(".dockerignore pattern %q drops %s, which the image build needs", p, need)
			}
		}
	}
	for _, must := range []string{".git", "**/node_modules"} {
		if !slices.Contains(patterns, must) {
			t.Errorf(".dockerignore should exclude %s", must)
		}
	}
}

// The stdio variant is a build target beside the default image: Node.js
// and Python for stdio MCP servers, the same binaries, non-root, and not
// the last stage (a plain `docker build` still gives the distroless image).
func TestDockerfileHasAStdioTarget(t *testing.T) {
	ins := dockerfile(t)
	var stages [][][]string // instructions per stage
	var names []string
	for _, in := range ins {
		if strings.EqualFold(in[0], "FROM") {
			stages = append(stages, nil)
			name := ""
			if len(in) >= 4 && strings.EqualFold(in[len(in)-2], "AS") {
				name = in[len(in)-1]
			}
			names = append(names, name)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	i := slices.Index(names, "stdio")
	if i < 0 {
		t.Fatalf("no `AS stdio` stage (stages %v)", names)
	}
	if i == len(stages)-1 {
		t.Error("the stdio stage is the last one: a plain docker build would give it instead of the distroless image")
	}
	var text, user string
	for _, in := range stages[i] {
		text += strings.Join(in, " ") + "\n"
		if strings.EqualFold(in[0], "USER") {
			user = in[1]
		}
	}
	from := stages[i][0][len(stages[i][0])-3]
	if !strings.HasPrefix(from, "node:") || strings.HasSuffix(from, ":latest") || !strings.ContainsAny(from[len("node:"):], "0123456789") {
		t.Errorf("stdio stage FROM %s; want a pinned node image", from)
	}
	for _, want := range []string{"python3", "uv==", "/out/toolnexus-server", "/src/skills /app/skills", "ENTRYPOINT"} {
		if !strings.Contains(text, want) {
			t.Errorf("the stdio stage lacks %q", want)
		}
	}
	if user != "65532:65532" {
		t.Errorf("stdio stage USER %q; want 65532:65532 like the default image", user)
	}
}
