package catalog

import "github.com/prometheus/client_golang/prometheus"

// registerMetrics registers toolnexus_definition_changes_total (every
// source label at 0 from the first scrape) and toolnexus_definitions_held.
func (c *Catalog) registerMetrics(reg prometheus.Registerer, sourceLabels []string) {
	c.changes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_definition_changes_total",
		Help: "Tool definitions that did not match their pin (changed, added, or first seen and held), by source label; counted once per definition and process.",
	}, []string{"source"})
	for _, s := range sourceLabels {
		c.changes.WithLabelValues(s)
	}
	if reg == nil {
		return
	}
	reg.MustRegister(c.changes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolnexus_definitions_held",
		Help: "Tool definitions held back right now (pinning.mode hold): not listed, not run, until an approver accepts them.",
	}, c.heldCount))
}

func (c *Catalog) heldCount() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.layers {
		n += len(l.held)
	}
	return float64(n)
}
