package confine_test

import (
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/internal/confine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// claims is a sandbox from outside the server that says it confines.
type claims bool

func (c claims) On() bool { return bool(c) }

func TestRunner(t *testing.T) {
	t.Parallel()
	var nilRunner *sandbox.Runner
	for _, tc := range []struct {
		name string
		in   interface{ On() bool }
		err  error
	}{
		{"nil", nil, nil},
		{"typed nil runner", nilRunner, nil},
		{"runner without a box", &sandbox.Runner{}, nil},
		{"foreign and off", claims(false), nil},
		{"foreign claiming to confine", claims(true), confine.ErrForeign},
	} {
		r, err := confine.Runner(tc.in)
		if !errors.Is(err, tc.err) || r != nil {
			t.Errorf("%s: Runner = %v, %v; want nil, %v", tc.name, r, err, tc.err)
		}
	}
}
