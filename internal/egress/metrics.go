package egress

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the proxy's series, each child made once so counting takes
// no label lookup.
type Metrics struct {
	allowed, refused prometheus.Counter
	sent, received   prometheus.Counter
}

// NewMetrics registers toolnexus_egress_connections_total{decision} and
// toolnexus_egress_bytes_total{direction} with reg, every child at 0.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	conns := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_egress_connections_total",
		Help: "Connections sandboxed commands asked the egress proxy for, by decision (allow, deny).",
	}, []string{"decision"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_egress_bytes_total",
		Help: "Bytes relayed by the egress proxy, by direction (sent: command to host; received: host to command).",
	}, []string{"direction"})
	reg.MustRegister(conns, bytes)
	return &Metrics{
		allowed: conns.WithLabelValues("allow"), refused: conns.WithLabelValues("deny"),
		sent: bytes.WithLabelValues("sent"), received: bytes.WithLabelValues("received"),
	}
}

func (m *Metrics) connection(allowed bool) {
	if m == nil {
		return
	}
	if allowed {
		m.allowed.Inc()
	} else {
		m.refused.Inc()
	}
}

func (m *Metrics) bytes(sent, received int64) {
	if m == nil {
		return
	}
	m.sent.Add(float64(sent))
	m.received.Add(float64(received))
}
