package cluster

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Metrics are the toolnexus_cluster_* series: every Redis operation by
// command (a fixed set: the stores' scripts and commands), its errors
// and latency, whether Redis is up, and each store's fallbacks.
type Metrics struct {
	ops       *prometheus.CounterVec
	errs      *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	up        prometheus.Gauge
	fallbacks *prometheus.CounterVec
}

// Stores name the fallback counter's label: what fell back to what.
const (
	// FallbackRateLimit counts rate-limit decisions made by the replica's
	// local limiter because Redis could not be asked.
	FallbackRateLimit = "ratelimit"
	// FallbackApproval counts approvals and pending answers refused
	// because Redis could not be asked (they fail closed).
	FallbackApproval = "approval"
	// FallbackPins counts pin store operations refused because Redis
	// could not be asked (new and changed definitions stay held).
	FallbackPins = "pins"
)

func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolnexus_cluster_operations_total",
			Help: "Redis operations of the shared control plane (cluster.redis), by command."}, []string{"op"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolnexus_cluster_errors_total",
			Help: "Redis operations that failed (unreachable, timeout, error reply), by command."}, []string{"op"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "toolnexus_cluster_operation_seconds",
			Help:    "Latency of Redis operations of the shared control plane, by command.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"op"}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "toolnexus_cluster_up",
			Help: "1 while Redis answers, 0 while the replica runs on its fallbacks."}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "toolnexus_cluster_fallbacks_total",
			Help: "Decisions made without Redis: rate limits applied locally, approvals and pending answers refused."}, []string{"store"}),
	}
	reg.MustRegister(m.ops, m.errs, m.latency, m.up, m.fallbacks)
	m.fallbacks.WithLabelValues(FallbackRateLimit)
	m.fallbacks.WithLabelValues(FallbackApproval)
	m.fallbacks.WithLabelValues(FallbackPins)
	// The commands every replica sends, so a fresh replica shows 0, not
	// "no data": the stores' scripts, the health check, the broadcasts.
	for _, op := range []string{"evalsha", "pipeline", "publish"} {
		m.ops.WithLabelValues(op)
		m.errs.WithLabelValues(op)
		m.latency.WithLabelValues(op)
	}
	return m
}

// Fallback counts one decision store made without Redis.
func (m *Metrics) Fallback(store string) { m.fallbacks.WithLabelValues(store).Inc() }

// hook times and counts every command and pipeline.
func (m *Metrics) hook() redis.Hook { return metricsHook{m} }

type metricsHook struct{ m *Metrics }

func (metricsHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h metricsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.m.observe(opName(cmd), start, err)
		return err
	}
}

func (h metricsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.m.observe("pipeline", start, err)
		return err
	}
}

func (m *Metrics) observe(op string, start time.Time, err error) {
	m.ops.WithLabelValues(op).Inc()
	m.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, redis.Nil) {
		m.errs.WithLabelValues(op).Inc()
	}
}

// opName is the command's name; a script is named by what it runs
// (evalsha/eval), which is all the stores send.
func opName(cmd redis.Cmder) string { return strings.ToLower(cmd.Name()) }

// Unreachable reports whether err means Redis could not be asked (as
// opposed to an answer such as "no such key" or a script's error reply).
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		// LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN: the server is there
		// but cannot answer yet.
		msg := re.Error()
		for _, p := range []string{"LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true // an I/O error of another kind (EOF, connection reset)
}
