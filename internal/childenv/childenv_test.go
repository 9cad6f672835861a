package childenv_test

import (
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/internal/childenv"
)

func TestBuildKeepsTheBaseAndTheExtraOnly(t *testing.T) {
	server := map[string]string{"PATH": "/bin", "HOME": "/root", "TZ": "UTC", "ADMIN_TOKEN": "secret", "AWS_SECRET_ACCESS_KEY": "secret"}
	lookup := func(k string) (string, bool) { v, ok := server[k]; return v, ok }
	got := childenv.BuildWith(lookup, map[string]string{"API_KEY": "k", "TZ": "Europe/Lisbon"})
	want := []string{"API_KEY=k", "HOME=/root", "PATH=/bin", "TZ=Europe/Lisbon"}
	if !slices.Equal(got, want) {
		t.Fatalf("Build = %q, want %q", got, want)
	}
	if got := childenv.BuildWith(lookup, nil); !slices.Equal(got, []string{"HOME=/root", "PATH=/bin", "TZ=UTC"}) {
		t.Fatalf("Build(nil) = %q", got)
	}
}

func TestValidName(t *testing.T) {
	for s, want := range map[string]bool{"PATH": true, "_x1": true, "a": true, "": false, "1A": false, "A-B": false, "A=B": false} {
		if childenv.ValidName(s) != want {
			t.Errorf("ValidName(%q) = %v", s, !want)
		}
	}
}
