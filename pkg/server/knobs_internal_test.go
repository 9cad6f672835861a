package server

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/serverknobs"
)

// The bench's knob must land in Options, or `make bench` would measure the
// chain on both sides of its row without anyone noticing.
func TestServerKnobsReachOptions(t *testing.T) {
	t.Parallel()
	var o Options
	serverknobs.Set(&o, serverknobs.Knobs{DisableInterceptors: true})
	if !o.knobs.DisableInterceptors {
		t.Error("serverknobs.Set did not reach Options")
	}
}

// The public constants are spelled out; they must stay the gateway's.
func TestMCPConstantsAreTheGateways(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{
		{MCPPath, mcpgateway.Path},
		{MetaSource, mcpgateway.MetaSource},
		{MetaOutcome, mcpgateway.MetaOutcome},
		{MetaMetadata, mcpgateway.MetaMetadata},
		{MetaPending, mcpgateway.MetaPending},
		{MetaAnswer, mcpgateway.MetaAnswer},
	} {
		if c[0] != c[1] {
			t.Errorf("pkg/server has %q, the gateway %q", c[0], c[1])
		}
	}
}
