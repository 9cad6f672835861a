package deploy_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// The shared-sessions overlay lists its files, puts the sessions' root on
// a ReadWriteMany claim mounted where the base mounts its emptyDir, and
// its config (sessions.shared) is one the real server serves.
func TestSharedSessionsOverlay(t *testing.T) {
	const dir = "kubernetes/shared-sessions"
	var k struct {
		Resources []string `yaml:"resources"`
		Patches   []struct {
			Path string `yaml:"path"`
		} `yaml:"patches"`
	}
	readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
	listed := slices.Clone(k.Resources)
	for _, p := range k.Patches {
		listed = append(listed, p.Path)
	}
	if !slices.Contains(listed, "../") {
		t.Errorf("the overlay does not build on the base: %v", listed)
	}
	files, _ := filepath.Glob(dir + "/*.yaml")
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !slices.Contains(listed, b) {
			t.Errorf("the shared-sessions overlay does not use %s", b)
		}
	}

	var pvc struct {
		Kind     string `yaml:"kind"`
		Metadata meta   `yaml:"metadata"`
		Spec     struct {
			AccessModes []string `yaml:"accessModes"`
		} `yaml:"spec"`
	}
	readYAML(t, filepath.Join(dir, "pvc.yaml"), &pvc)
	if pvc.Kind != "PersistentVolumeClaim" || !slices.Equal(pvc.Spec.AccessModes, []string{"ReadWriteMany"}) {
		t.Errorf("want a ReadWriteMany claim, got %s %v", pvc.Kind, pvc.Spec.AccessModes)
	}

	var d struct {
		Metadata meta `yaml:"metadata"`
		Spec     struct {
			Template struct {
				Spec struct {
					Volumes []struct {
						Name     string         `yaml:"name"`
						EmptyDir map[string]any `yaml:"emptyDir"`
						PVC      *struct {
							ClaimName string `yaml:"claimName"`
						} `yaml:"persistentVolumeClaim"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, filepath.Join(dir, "deployment-patch.yaml"), &d)
	vols := d.Spec.Template.Spec.Volumes
	if d.Metadata.Name != "toolnexus" || len(vols) != 1 || vols[0].Name != "sessions" || vols[0].EmptyDir != nil ||
		vols[0].PVC == nil || vols[0].PVC.ClaimName != pvc.Metadata.Name {
		t.Errorf("the patch must swap the base's sessions emptyDir for claim %q: %+v", pvc.Metadata.Name, d)
	}

	var cm configMap
	readYAML(t, filepath.Join(dir, "config-patch.yaml"), &cm)
	cfg, path := loadConfigMap(t, cm)
	if !cfg.Sessions.Shared || cfg.Sessions.Root != "" {
		t.Errorf("sessions %+v: want shared on the default root (the mounted claim)", cfg.Sessions)
	}
	srv, err := server.New(server.Options{ConfigPath: path, Workspace: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("the real server rejects the overlay's config: %v", err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
