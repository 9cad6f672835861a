package http_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
)

// The secret reaches the API and nothing else: not the logs, the status,
// the results, nor the config fingerprint.
func TestHeaderSecretsAreExpandedButNeverShown(t *testing.T) {
	const secret = "s3cret-Value-9f1c"
	t.Setenv("TN_HTTP_TEST_TOKEN", secret)
	a := newAPI(t)
	gone := newAPI(t)
	goneURL := gone.URL
	gone.Close()

	auth := `{"Authorization":"Bearer ${TN_HTTP_TEST_TOKEN}"}`
	cfg := parse(t, `[
		{"name":"whoami","url":`+q(a.URL+"/me")+`,"headers":`+auth+`},
		{"name":"denied","url":`+q(a.URL+"/status/401")+`,"headers":`+auth+`},
		{"name":"gone","url":`+q(goneURL+"/me")+`,"headers":`+auth+`},
		{"name":"slow","url":`+q(a.URL+"/slow")+`,"timeout":20,"headers":`+auth+`},
		{"name":"unset","url":`+q(a.URL+"/me")+`,"headers":{"X-Key":"k-${TN_HTTP_TEST_UNSET_VAR}"}}]`,
		`[{"spec":"no-such-spec.yaml","headers":`+auth+`}]`)

	var logs syncBuffer
	env := sources.Env{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), BaseDir: t.TempDir()}
	reg, src, err := start(t, cfg, env)
	if err != nil {
		t.Fatalf("Start returned %v; a partial load must not fail Start", err)
	}

	// The upstream echoes the header: it received the expanded secret,
	// which the result then carries only as [redacted].
	who := call(t, reg, "whoami", `{}`)
	if got := echoed(t, who); got.Auth != "Bearer [redacted]" {
		t.Fatalf("Authorization echoed as %q, want the expanded secret, redacted", got.Auth)
	}
	texts := []string{who.Output}
	for _, name := range []string{"denied", "gone", "slow"} {
		res := call(t, reg, name, `{}`)
		if !res.IsError {
			t.Errorf("%s: want a failure, got %+v", name, res)
		}
		meta, _ := json.Marshal(res.Metadata)
		texts = append(texts, res.Output, string(meta))
	}
	<-a.arrived

	st := src.Status()
	if st.State != sources.Failed {
		t.Errorf("state = %s, want failed", st.State)
	}
	contains(t, "status error", st.Error, `http tool "unset": header X-Key: environment variable TN_HTTP_TEST_UNSET_VAR is not set (referenced as ${TN_HTTP_TEST_UNSET_VAR})`)
	contains(t, "status error", st.Error, "openapi[0] (no-such-spec.yaml): cannot load the spec")
	if _, ok := reg.Snapshot().Lookup("unset"); ok {
		t.Error("the tool with the unset variable was published")
	}

	fingerprint, _ := json.Marshal(cfg)
	contains(t, "config JSON", string(fingerprint), "Bearer ${TN_HTTP_TEST_TOKEN}")
	texts = append(texts, st.Error, logs.String(), string(fingerprint))
	for _, text := range texts {
		if strings.Contains(text, secret) {
			t.Errorf("the secret leaked into %q", text)
		}
	}
	contains(t, "logs", logs.String(), "TN_HTTP_TEST_UNSET_VAR")
}

func TestNothingConfiguredIsDisabled(t *testing.T) {
	reg, src, err := start(t, httpsrc.Config{}, sources.Env{})
	if err != nil || src.Status().State != sources.Disabled || reg.Snapshot().Len() != 0 {
		t.Errorf("err %v, status %+v, tools %d", err, src.Status(), reg.Snapshot().Len())
	}
	if src.Layer() != registry.Layer(sources.KindHTTP) || src.Status().Layer != src.Layer() {
		t.Errorf("layer %v, status layer %v", src.Layer(), src.Status().Layer)
	}
	if tools := src.(*httpsrc.Source).Tools(); len(tools) != 0 {
		t.Errorf("tools = %v", tools)
	}
}
