package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// Just the fields the checks need; yaml.v3 ignores the rest.
type meta struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
}

type probe struct {
	GRPC *struct {
		Port    int    `yaml:"port"`
		Service string `yaml:"service"`
	} `yaml:"grpc"`
	HTTPGet   any `yaml:"httpGet"`
	Exec      any `yaml:"exec"`
	TCPSocket any `yaml:"tcpSocket"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type deployment struct {
	Spec struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata meta `yaml:"metadata"`
			Spec     struct {
				SecurityContext struct {
					RunAsNonRoot   bool `yaml:"runAsNonRoot"`
					RunAsUser      int  `yaml:"runAsUser"`
					SeccompProfile struct {
						Type string `yaml:"type"`
					} `yaml:"seccompProfile"`
				} `yaml:"securityContext"`
				Containers []struct {
					Name  string          `yaml:"name"`
					Image string          `yaml:"image"`
					Args  []string        `yaml:"args"`
					Ports []containerPort `yaml:"ports"`
					Env   []struct {
						Name      string `yaml:"name"`
						ValueFrom struct {
							SecretKeyRef *struct {
								Name string `yaml:"name"`
								Key  string `yaml:"key"`
							} `yaml:"secretKeyRef"`
							FieldRef *struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					ReadinessProbe  probe `yaml:"readinessProbe"`
					LivenessProbe   probe `yaml:"livenessProbe"`
					StartupProbe    probe `yaml:"startupProbe"`
					SecurityContext struct {
						ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
						AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
						Privileged               bool `yaml:"privileged"`
						Capabilities             struct {
							Add  []string `yaml:"add"`
							Drop []string `yaml:"drop"`
						} `yaml:"capabilities"`
					} `yaml:"securityContext"`
					Resources struct {
						Requests map[string]string `yaml:"requests"`
						Limits   map[string]string `yaml:"limits"`
					} `yaml:"resources"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					EmptyDir  any    `yaml:"emptyDir"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type servicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort any    `yaml:"targetPort"`
}

type service struct {
	Metadata meta `yaml:"metadata"`
	Spec     struct {
		ClusterIP string            `yaml:"clusterIP"`
		Selector  map[string]string `yaml:"selector"`
		Ports     []servicePort     `yaml:"ports"`
	} `yaml:"spec"`
}

type serviceMonitor struct {
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Endpoints []struct {
			Port string `yaml:"port"`
			Path string `yaml:"path"`
		} `yaml:"endpoints"`
	} `yaml:"spec"`
}

type configMap struct {
	Metadata meta              `yaml:"metadata"`
	Data     map[string]string `yaml:"data"`
}

// loadConfigMap writes the ConfigMap's toolnexus.json to a file and loads
// it as the server would, with the agent token's variable set as the
// Secret sets it; it returns the config and the file.
func loadConfigMap(t *testing.T, cm configMap) (*config.Config, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolnexus.json")
	if err := os.WriteFile(path, []byte(cm.Data["toolnexus.json"]), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLNEXUS_AGENT_TOKEN", "a-long-random-test-token")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

// manifests decodes every document of every YAML file in deploy/kubernetes,
// keyed by "Kind/name".
func manifests(t *testing.T) (map[string]*yaml.Node, []string) {
	t.Helper()
	files, err := filepath.Glob("kubernetes/base/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no YAML in deploy/kubernetes (%v)", err)
	}
	objs := map[string]*yaml.Node{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var o object
			if err := n.Decode(&o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.Kind == "Kustomization" {
				continue
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: a document lacks apiVersion, kind or metadata.name", f)
				continue
			}
			key := o.Kind + "/" + o.Metadata.Name
			if _, dup := objs[key]; dup {
				t.Errorf("%s: %s is defined twice", f, key)
			}
			objs[key] = &n
		}
	}
	return objs, files
}

func decode[T any](t *testing.T, objs map[string]*yaml.Node, key string) T {
	t.Helper()
	var v T
	n, ok := objs[key]
	if !ok {
		t.Fatalf("deploy/kubernetes has no %s", key)
	}
	if err := n.Decode(&v); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return v
}

// selects reports whether a selector picks pods with these labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	_, files := manifests(t)
	data, err := os.ReadFile("kubernetes/base/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if base != "kustomization.yaml" && !slices.Contains(k.Resources, base) {
			t.Errorf("kustomization.yaml does not list %s", base)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join("kubernetes", "base", r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
}

func TestKubernetesManifests(t *testing.T) {
	objs, _ := manifests(t)
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	svc := decode[service](t, objs, "Service/toolnexus")
	headless := decode[service](t, objs, "Service/toolnexus-headless")
	mon := decode[serviceMonitor](t, objs, "ServiceMonitor/toolnexus")
	cm := decode[configMap](t, objs, "ConfigMap/toolnexus-config")

	pod := dep.Spec.Template
	if !selects(dep.Spec.Selector.MatchLabels, pod.Metadata.Labels) {
		t.Errorf("the Deployment's selector %v does not match its pod labels %v", dep.Spec.Selector.MatchLabels, pod.Metadata.Labels)
	}
	if dep.Spec.Replicas < 2 {
		t.Errorf("replicas = %d; the load-balancing setup wants several", dep.Spec.Replicas)
	}
	if !pod.Spec.SecurityContext.RunAsNonRoot || pod.Spec.SecurityContext.RunAsUser == 0 {
		t.Error("the pod must run as a non-root user (runAsNonRoot, runAsUser != 0)")
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["grpc"] != 50051 || ports["metrics"] != 9464 {
		t.Errorf("container ports = %v; want grpc 50051 and metrics 9464", ports)
	}
	for name, p := range map[string]probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe, "startup": c.StartupProbe} {
		if p.GRPC == nil || p.HTTPGet != nil || p.Exec != nil || p.TCPSocket != nil {
			t.Errorf("%s probe must be a grpc probe on the health service", name)
			continue
		}
		if p.GRPC.Port != ports["grpc"] {
			t.Errorf("%s probe port %d, want the grpc port %d", name, p.GRPC.Port, ports["grpc"])
		}
	}
	if s := c.ReadinessProbe.GRPC; s != nil && s.Service != "toolnexus.v1.RegistryService" {
		t.Errorf("readiness probe checks service %q; want toolnexus.v1.RegistryService", s.Service)
	}
	if !c.SecurityContext.ReadOnlyRootFilesystem || c.SecurityContext.AllowPrivilegeEscalation {
		t.Error("the container needs readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources = %+v; want cpu and memory requests and a memory limit", c.Resources)
	}

	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	emptyDirs, cmVolume := map[string]bool{}, ""
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
		if v.ConfigMap != nil {
			cmVolume = v.Name
			if v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("volume %s mounts ConfigMap %s; the manifests define %s", v.Name, v.ConfigMap.Name, cm.Metadata.Name)
			}
		}
	}
	if !emptyDirs["workspace"] || mounts["workspace"] != "/workspace" {
		t.Errorf("want an emptyDir named workspace mounted at /workspace (mounts %v)", mounts)
	}
	// The sessions live beside the workspace (sessions.root's default),
	// which the read-only root filesystem cannot hold.
	if !emptyDirs["sessions"] || mounts["sessions"] != "/workspace.sessions" {
		t.Errorf("want an emptyDir named sessions mounted at /workspace.sessions, the default sessions.root (mounts %v)", mounts)
	}
	if cmVolume == "" || !slices.Contains(c.Args, "--config="+mounts[cmVolume]+"/toolnexus.json") {
		t.Errorf("args %v must point --config at the mounted ConfigMap (%s/toolnexus.json)", c.Args, mounts[cmVolume])
	}

	// Services route to the Deployment's pods on the named ports.
	for _, s := range []service{svc, headless} {
		if !selects(s.Spec.Selector, pod.Metadata.Labels) {
			t.Errorf("Service %s selector %v does not match the pods %v", s.Metadata.Name, s.Spec.Selector, pod.Metadata.Labels)
		}
		for _, p := range s.Spec.Ports {
			target, _ := p.TargetPort.(string)
			if ports[target] == 0 || ports[target] != p.Port {
				t.Errorf("Service %s port %s: %d -> %v; want a named container port with the same number", s.Metadata.Name, p.Name, p.Port, p.TargetPort)
			}
		}
	}
	if headless.Spec.ClusterIP != "None" {
		t.Errorf("toolnexus-headless clusterIP = %q; want None so DNS returns every pod for round_robin", headless.Spec.ClusterIP)
	}
	if len(headless.Spec.Ports) != 1 || headless.Spec.Ports[0].Port != 50051 {
		t.Errorf("toolnexus-headless ports = %+v; want only grpc 50051 (dns:///toolnexus-headless:50051)", headless.Spec.Ports)
	}

	// The ServiceMonitor scrapes the metrics port of exactly one Service.
	if !selects(mon.Spec.Selector.MatchLabels, svc.Metadata.Labels) || selects(mon.Spec.Selector.MatchLabels, headless.Metadata.Labels) {
		t.Errorf("ServiceMonitor selector %v must pick Service toolnexus and not the headless one (pods would be scraped twice)", mon.Spec.Selector.MatchLabels)
	}
	if len(mon.Spec.Endpoints) != 1 || mon.Spec.Endpoints[0].Port != "metrics" || mon.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints = %+v; want port metrics, path /metrics", mon.Spec.Endpoints)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p servicePort) bool { return p.Name == "metrics" }) {
		t.Error("Service toolnexus has no port named metrics for the ServiceMonitor")
	}

	// The token the config expands comes from a Secret.
	var tokenFromSecret bool
	for _, e := range c.Env {
		if e.Name == "TOOLNEXUS_AGENT_TOKEN" && e.ValueFrom.SecretKeyRef != nil {
			tokenFromSecret = true
		}
	}
	if !tokenFromSecret || !strings.Contains(cm.Data["toolnexus.json"], "${TOOLNEXUS_AGENT_TOKEN}") {
		t.Error("the config's token must be ${TOOLNEXUS_AGENT_TOKEN}, set from a Secret in the Deployment")
	}
}

// TestConfigMapIsAServableConfig loads the ConfigMap's config with the real
// parser and builds a real server from it: it listens where the container
// ports say, and its auth tokens are what let it listen on 0.0.0.0 without
// --insecure.
func TestConfigMapIsAServableConfig(t *testing.T) {
	objs, _ := manifests(t)
	cm := decode[configMap](t, objs, "ConfigMap/toolnexus-config")
	path := filepath.Join(t.TempDir(), "toolnexus.json")
	if err := os.WriteFile(path, []byte(cm.Data["toolnexus.json"]), 0o600); err != nil {
		t.Fatal(err)
	}

	// Without the Secret the pod must fail fast, naming the key.
	t.Setenv("TOOLNEXUS_AGENT_TOKEN", "")
	if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), "auth.tokens[0].token") {
		t.Errorf("config without the token env: %v; want an error naming auth.tokens[0].token", err)
	}

	t.Setenv("TOOLNEXUS_AGENT_TOKEN", "a-long-random-test-token")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Listen != "0.0.0.0:50051" || cfg.Server.MetricsListen != "0.0.0.0:9464" {
		t.Errorf("listen %s, metrics %s; want 0.0.0.0:50051 and 0.0.0.0:9464 like the container ports", cfg.Server.Listen, cfg.Server.MetricsListen)
	}
	if cfg.Builtins.Workspace != "/workspace" {
		t.Errorf("builtins.workspace = %s; want /workspace, the emptyDir", cfg.Builtins.Workspace)
	}
	if !cfg.Server.WatchConfig {
		t.Error("server.watchConfig should be on so ConfigMap edits apply without a restart")
	}
	// New checks the exposure rule without binding a port; the workspace is
	// moved off /workspace, which does not exist here.
	srv, err := server.New(server.Options{ConfigPath: path, Workspace: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("the real server rejects the ConfigMap config: %v", err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
