package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestPendingDefaultsAndValues(t *testing.T) {
	cfg, err := parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config.Pending{Timeout: 10 * time.Minute, MaxPerPrincipal: 100}); cfg.Pending != want {
		t.Fatalf("pending = %+v, want %+v", cfg.Pending, want)
	}
	cfg, err = parse(t, `{"limits": {"pendingTimeout": 1500, "maxPending": 3, "timeout": 2000}}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config.Pending{Timeout: 1500 * time.Millisecond, MaxPerPrincipal: 3}); cfg.Pending != want || cfg.Limits.Timeout != 2*time.Second {
		t.Fatalf("pending = %+v, limits.timeout = %v", cfg.Pending, cfg.Limits.Timeout)
	}
}

func TestPendingErrorsNameTheKey(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"limits": {"pendingTimeout": 0}}`, "config: limits.pendingTimeout: must be a positive number of milliseconds"},
		{`{"limits": {"maxPending": 0}}`, "config: limits.maxPending: must be a whole number of at least 1"},
		{`{"limits": {"maxPending": "x"}}`, "config: limits.maxPending:"},
		{`{"limits": {"maxPending": 2, "pendingTimeot": 5}}`, "config: limits.pendingTimeot: unknown key"},
	}
	for _, c := range cases {
		if got := mustFail(t, c.text).Error(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want prefix %q", c.text, got, c.want)
		}
	}
}
