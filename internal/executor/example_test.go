package executor_test

import (
	"encoding/json"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/debug"
)

// A model's arguments that do not match the tool's input schema come back
// as a result naming each failing field, so the model can fix its call.
func ExamplePrepared_Arguments() {
	reg := registry.New()
	cfg, _ := config.Parse([]byte(`{}`), "", ".")
	x := executor.New(reg, metrics.New(prometheus.NewRegistry()).ForExecutor(), cfg.Limits, nil)
	_ = reg.Replace(registry.Layer(sources.KindDebug), debug.Tools())

	_, res, _ := x.Prepared("debug_sleep").Arguments(json.RawMessage(`{"ms": "soon"}`))
	fmt.Println(res.Outcome)
	fmt.Println(res.Output)
	// Output:
	// invalid_arguments
	// invalid arguments for debug_sleep (fix these and call again):
	// - ms: expected integer, got string
}
