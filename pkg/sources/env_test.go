package sources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

func TestExpandEnvReadsVariablesAndFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("from-file\r\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_SOURCES_TEST_VAR", "from-env")
	for _, tc := range []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "Bearer ${TN_SOURCES_TEST_VAR}", want: "Bearer from-env"},
		{in: "Bearer ${file:" + file + "}", want: "Bearer from-file"},
		{in: "${TN_SOURCES_TEST_VAR}:${file:" + file + "}", want: "from-env:from-file"},
		{in: "${TN_SOURCES_TEST_UNSET}", err: "environment variable TN_SOURCES_TEST_UNSET is not set (referenced as ${TN_SOURCES_TEST_UNSET})"},
		{in: "${file:" + dir + "/missing}", err: "cannot read the secret file " + dir + "/missing (referenced as ${file:" + dir + "/missing}): no such file or directory"},
		{in: "${file:relative/token}", err: "${file:relative/token}: the secret file must be an absolute path, e.g. ${file:/run/secrets/token}"},
	} {
		got, err := sources.ExpandEnv(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ExpandEnv(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRedactorCutsEveryExpandedSecret(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("file-secret-42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_SOURCES_TEST_KEY", "env-secret-17")
	t.Setenv("TN_SOURCES_TEST_SHORT", "ab")
	r := sources.RedactorFor(map[string]string{"Authorization": "Bearer ${TN_SOURCES_TEST_KEY}", "X-File": "${file:" + file + "}",
		"X-Short": "${TN_SOURCES_TEST_SHORT}", "X-Unset": "${TN_SOURCES_TEST_UNSET}"})
	got := r.Apply("token env-secret-17 and file-secret-42, ab stays")
	if want := "token [redacted] and [redacted], ab stays"; got != want {
		t.Errorf("Apply = %q, want %q", got, want)
	}
	if (sources.Redactor{}).Apply("x") != "x" || !(sources.Redactor{}).Empty() {
		t.Error("the zero Redactor must do nothing")
	}
}
