package deploy_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// The manifests run the sandbox, with one extra permission: a seccomp
// profile that lets the server create user namespaces. No capability is
// added, nothing is privileged, privilege escalation stays off.
func TestManifestsRunTheSandbox(t *testing.T) {
	objs, _ := manifests(t)
	dep := decode[deployment](t, objs, "Deployment/toolnexus")
	pod := dep.Spec.Template.Spec
	if got := pod.SecurityContext.SeccompProfile.Type; got != "Unconfined" && got != "Localhost" {
		t.Errorf("pod seccompProfile %q: the runtime default refuses the sandbox's user namespaces; want Unconfined or a Localhost profile that allows them", got)
	}
	c := pod.Containers[0].SecurityContext
	if c.Privileged || c.AllowPrivilegeEscalation || len(c.Capabilities.Add) > 0 || !slices.Contains(c.Capabilities.Drop, "ALL") {
		t.Errorf("container securityContext %+v: the sandbox needs no capability and no privilege", c)
	}

	cm := decode[configMap](t, objs, "ConfigMap/toolnexus-config")
	cfg, path := loadConfigMap(t, cm)
	if cfg.Sandbox.Mode == sandbox.ModeOff || cfg.Sandbox.Network {
		t.Errorf("the ConfigMap's sandbox is %+v; want it on, network off", cfg.Sandbox)
	}
	// The real server with that config logs what its commands run under.
	logs := &testutil.Buffer{}
	srv, err := server.New(server.Options{ConfigPath: path, Workspace: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.MultiWriter(logs), nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "sandbox auto: active: ") {
		t.Errorf("no sandbox line in the startup log:\n%s", logs.String())
	}
}
