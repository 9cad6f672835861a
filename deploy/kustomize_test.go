package deploy_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// kubectlPath is kubectl, or the test is skipped (failed under
// TOOLNEXUS_REQUIRE_E2E=1, as in CI).
func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err == nil {
		return p
	}
	if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
		t.Fatalf("kubectl not found (%v); TOOLNEXUS_REQUIRE_E2E=1 requires it to build the Kustomize directories", err)
	}
	t.Skipf("kubectl not found (%v): the Kustomize directories are not built (install kubectl to run this)", err)
	return ""
}

// kustomizeDirs are the directories under deploy/kubernetes that
// `kubectl apply -k` takes (a Kustomization, not a Component).
func kustomizeDirs(t *testing.T) (dirs, components []string) {
	t.Helper()
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "kustomization.yaml" {
			return err
		}
		var k struct {
			Kind string `yaml:"kind"`
		}
		readYAML(t, path, &k)
		if k.Kind == "Component" {
			components = append(components, filepath.Dir(path))
		} else {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs, components
}

// kustomize builds dir with kubectl and decodes the objects, keyed by
// "Kind/name".
func kustomize(t *testing.T, kubectl, dir string) map[string]*yaml.Node {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, errOut.String())
	}
	objs := map[string]*yaml.Node{}
	dec := yaml.NewDecoder(&out)
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var o object
		if err := n.Decode(&o); err != nil {
			t.Fatal(err)
		}
		objs[o.Kind+"/"+o.Metadata.Name] = &n
	}
	return objs
}

// builtConfig writes the built ConfigMap's keys where the pod mounts them
// (a temp dir standing in for /etc/toolnexus), loads the config the way the
// Deployment's args say (--config and every --config-patch) and returns it
// with the server options that serve it.
// redisSecretMount is where the redis component mounts its password
// Secret; the config reads the password from it (${file:...}).
const redisSecretMount = "/etc/toolnexus-redis/"

// mountedSecrets writes the built Secrets a config reads by ${file:...}
// to a local directory, and maps each mount path to it, so the real
// server can read the config as the pod would.
func mountedSecrets(t *testing.T, objs map[string]*yaml.Node) map[string]string {
	t.Helper()
	if _, ok := objs["Secret/toolnexus-redis"]; !ok {
		return nil
	}
	sec := decode[secretObject](t, objs, "Secret/toolnexus-redis")
	dir := t.TempDir()
	for k, v := range sec.Data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("Secret/toolnexus-redis %s: %v", k, err)
		}
		if err := os.WriteFile(filepath.Join(dir, k), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{redisSecretMount: dir + "/"}
}

// replacePlaceholderPassword checks that the redis component's placeholder
// password, as built, is refused by the start and by --check, naming the
// key and the fix — an overlay applied as is must not run Redis behind a
// password every reader of this repository knows — then writes a real
// secret in its place, as the docs tell the operator to.
func replacePlaceholderPassword(t *testing.T, opts server.Options, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != config.PlaceholderRedisPassword {
		t.Fatalf("the redis component's Secret holds %d bytes, not the placeholder the server refuses", len(b))
	}
	if _, err := server.New(opts); err == nil || !strings.Contains(err.Error(), "cluster.redis.password: is the placeholder") {
		t.Fatalf("the server started with the placeholder Redis password (err %v)", err)
	}
	if _, err := server.CheckReport(opts); err == nil || !strings.Contains(err.Error(), "cluster.redis.password") || !strings.Contains(err.Error(), "openssl rand") {
		t.Fatalf("--check passed the placeholder Redis password (err %v)", err)
	}
	if err := os.WriteFile(file, []byte("a-long-random-test-secret-4b1d9"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// mcpStateMount is where the shared-sessions component mounts the /mcp
// requestState key, from a Secret the operator creates.
const mcpStateMount = "/etc/toolnexus-mcp-state/"

// operatorSecret writes a Secret an operator would create, as its mount
// holds it, and returns the directory standing in for the mount.
func operatorSecret(t *testing.T, key, value string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, key), []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir + "/"
}

type secretObject struct {
	Data map[string]string `yaml:"data"`
}

func builtConfig(t *testing.T, objs map[string]*yaml.Node) (*config.Config, server.Options) {
	t.Helper()
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	cm := decode[configMap](t, objs, "ConfigMap/toolnexus-config")
	dir := t.TempDir()
	secrets := mountedSecrets(t, objs)
	// The Secrets an operator creates (not built): the /mcp state key.
	if strings.Contains(strings.Join(slices.Collect(maps.Values(cm.Data)), "\n"), mcpStateMount) {
		if secrets == nil {
			secrets = map[string]string{}
		}
		secrets[mcpStateMount] = operatorSecret(t, "key", "a-random-48-byte-key-made-by-the-operator-0123456789")
	}
	for k, v := range cm.Data {
		for mount, local := range secrets {
			v = strings.ReplaceAll(v, mount, local)
		}
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const mount = "/etc/toolnexus/"
	opts := server.Options{Workspace: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if p, ok := strings.CutPrefix(a, "--config="+mount); ok {
			opts.ConfigPath = filepath.Join(dir, p)
		}
		if p, ok := strings.CutPrefix(a, "--config-patch="+mount); ok {
			if _, found := cm.Data[p]; !found {
				t.Errorf("--config-patch %s names no key of the ConfigMap", a)
			}
			opts.ConfigPatches = append(opts.ConfigPatches, filepath.Join(dir, p))
		} else if strings.HasPrefix(a, "--config-patch=") {
			t.Errorf("%s is not in the mounted ConfigMap (%s)", a, mount)
		}
	}
	if opts.ConfigPath == "" {
		t.Fatal("the Deployment's args have no --config in the mounted ConfigMap")
	}
	t.Setenv("TOOLNEXUS_AGENT_TOKEN", "a-long-random-test-token")
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if f := e.ValueFrom.FieldRef; f != nil && f.FieldPath == "metadata.namespace" {
			t.Setenv(e.Name, "test-namespace") // the downward API
		}
	}
	if local, ok := secrets[redisSecretMount]; ok {
		replacePlaceholderPassword(t, opts, filepath.Join(local, "password"))
	}
	cfg, err := config.LoadWith(opts.ConfigPath, config.Overrides{Patches: opts.ConfigPatches})
	if err != nil {
		t.Fatal(err)
	}
	// The base's sandbox block is in the config, and no patch removes it.
	var base map[string]any
	if err := json.Unmarshal([]byte(cm.Data["toolnexus.json"]), &base); err != nil || base["sandbox"] == nil {
		t.Errorf("the base config has no sandbox block (%v)", err)
	}
	for _, p := range opts.ConfigPatches {
		var patch map[string]any
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &patch); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if v, ok := patch["sandbox"]; ok && v == nil {
			t.Errorf("%s removes the base's sandbox block", filepath.Base(p))
		}
	}
	return cfg, opts
}

// Every directory `kubectl apply -k` takes builds, and what it builds is a
// deployment that works: several replicas, gRPC health probes, pinned
// images, the base's sandbox in the config, and a config the real server
// serves. The session variants carry what they promise, and hash routing
// and shared sessions combine.
func TestEveryKustomizeDirectoryBuilds(t *testing.T) {
	kubectl := kubectlPath(t)
	dirs, components := kustomizeDirs(t)
	want := []string{"kubernetes", "kubernetes/base", "kubernetes/sessions", "kubernetes/shared-sessions", "kubernetes/shared-hash-sessions"}
	for _, w := range want {
		if !slices.Contains(dirs, w) {
			t.Errorf("deploy/%s is missing (found %v)", w, dirs)
		}
	}
	used := map[string]bool{}
	for _, dir := range dirs {
		var k struct {
			Components []string `yaml:"components"`
		}
		readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
		for _, c := range k.Components {
			used[filepath.Clean(filepath.Join(dir, c))] = true
		}
		t.Run(dir, func(t *testing.T) {
			objs := kustomize(t, kubectl, dir)
			checkBuiltDeployment(t, objs)
			cfg, opts := builtConfig(t, objs)
			if cfg.Sandbox.Mode != "auto" || cfg.Sandbox.Network {
				t.Errorf("sandbox %+v; want the base's: auto, network off", cfg.Sandbox)
			}
			hash := slices.Contains(k.Components, "../components/hash-sessions")
			shared := slices.Contains(k.Components, "../components/shared-sessions")
			checkSessions(t, objs, cfg, hash, shared)
			srv, err := server.New(opts)
			if err != nil {
				t.Fatalf("the real server rejects the built config: %v", err)
			}
			if err := srv.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range components {
		if !used[c] {
			t.Errorf("component %s is used by no directory; add an overlay that builds it", c)
		}
	}
}

func checkBuiltDeployment(t *testing.T, objs map[string]*yaml.Node) {
	t.Helper()
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	if dep.Spec.Replicas < 2 {
		t.Errorf("replicas = %d, want several", dep.Spec.Replicas)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		if p.GRPC == nil || p.GRPC.Port != 50051 {
			t.Errorf("%s probe %+v; want a grpc probe on 50051", name, p)
		}
	}
	if _, ok := objs["PrometheusRule/toolnexus"]; !ok {
		t.Error("no PrometheusRule/toolnexus")
	}
	for key, n := range objs {
		var d deployment
		if !strings.HasPrefix(key, "Deployment/") || n.Decode(&d) != nil {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if i := strings.LastIndex(c.Image, ":"); i < 0 || strings.Contains(c.Image[i:], "/") || strings.HasSuffix(c.Image, "latest") {
				t.Errorf("%s: image %q is not pinned to a version", key, c.Image)
			}
		}
	}
}

// checkSessions checks what the session components promise.
func checkSessions(t *testing.T, objs map[string]*yaml.Node, cfg *config.Config, hash, shared bool) {
	t.Helper()
	_, envoy := objs["Deployment/toolnexus-envoy"]
	if envoy != hash {
		t.Errorf("Envoy deployment present = %v, want %v", envoy, hash)
	}
	if hash {
		var d struct {
			Spec struct {
				Template struct {
					Metadata meta `yaml:"metadata"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := objs["Deployment/toolnexus-envoy"].Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Spec.Template.Metadata.Labels["toolnexus.io/client"] != "true" {
			t.Error("the Envoy pods need toolnexus.io/client=true to pass the NetworkPolicy")
		}
	}
	if cfg.Sessions.Shared != shared {
		t.Errorf("sessions.shared = %v, want %v", cfg.Sessions.Shared, shared)
	}
	// A stateless /mcp behind several replicas signs requestState with one
	// key, or a 2026-07-28 client's suspended call fails on the others.
	if cfg.MCPStateless() && cfg.Server.MCP.StateKeyFile == "" && cfg.Cluster.Redis == nil {
		t.Errorf("/mcp is stateless with a key of each replica's own: set server.mcp.stateKeyFile or cluster.redis")
	}
	if shared && cfg.Server.MCP.StateKeyFile == "" {
		t.Errorf("the shared-sessions component sets no server.mcp.stateKeyFile")
	}
	if (hash || shared) && (cfg.Sessions.Max != 100 || cfg.Sessions.MaxBytes != 256<<20) {
		t.Errorf("sessions %+v; want max 100, maxBytes 256 MiB", cfg.Sessions)
	}
	_, pvc := objs["PersistentVolumeClaim/toolnexus-sessions"]
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	var emptySessions bool
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Name == "sessions" && v.EmptyDir != nil {
			emptySessions = true
		}
	}
	if pvc != shared || emptySessions == shared {
		t.Errorf("claim present %v, sessions emptyDir %v; want the claim (and no emptyDir) exactly when shared (%v)", pvc, emptySessions, shared)
	}
}
