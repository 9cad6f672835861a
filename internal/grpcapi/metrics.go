package grpcapi

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// handlingBuckets are grpc_server_handling_seconds' buckets: from half a
// millisecond (an Execute of a fast tool) to two minutes (a long tool call
// at the default limits), where the provider's defaults stop at 10 s.
var handlingBuckets = []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 30, 120}

// grpcMetrics are the standard gRPC server series with the names, labels
// and help texts of go-grpc-middleware's Prometheus provider, which
// dashboards and docs/observability.md query: grpc_server_started_total,
// grpc_server_handled_total, grpc_server_msg_received_total,
// grpc_server_msg_sent_total and the grpc_server_handling_seconds
// histogram, labelled grpc_type, grpc_service, grpc_method (and grpc_code).
//
// Why not the provider itself: it looks every series up by its label
// values on every call (four to five label-set hashes under the vectors'
// read locks, a reporter and label slices), ~5% of a server's CPU on the
// cheapest call (BENCHMARKS.md, "The cheapest call, again"), and it cannot
// hand out a method's series in advance. Here the series of every method
// registered on the server are resolved once, at Register, and a call
// costs a map read and atomic adds.
type grpcMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	seconds                          *prometheus.HistogramVec

	// methods is written by initialize, before the server serves, and only
	// read afterwards, so a call reads it without a lock. Methods
	// registered later (health, reflection) look their series up per call.
	methods map[string]*methodMetrics
}

// methodMetrics are one method's series.
type methodMetrics struct {
	started, received, sent prometheus.Counter
	seconds                 prometheus.Observer
	handled                 [codes.Unauthenticated + 1]prometheus.Counter // by code

	// For a code beyond the table (never one from grpc-go).
	m                  *grpcMetrics
	typ, service, name string
}

func newGRPCMetrics() *grpcMetrics {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	return &grpcMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total", Help: "Total number of RPCs started on the server.",
		}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total", Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, append(labels[:3:3], "grpc_code")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total", Help: "Total number of RPC stream messages received on the server.",
		}, labels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total", Help: "Total number of gRPC stream messages sent by the server.",
		}, labels),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: handlingBuckets,
		}, labels),
		methods: map[string]*methodMetrics{},
	}
}

// Describe and Collect make the set one prometheus.Collector.
func (m *grpcMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.started.Describe(ch)
	m.handled.Describe(ch)
	m.received.Describe(ch)
	m.sent.Describe(ch)
	m.seconds.Describe(ch)
}

func (m *grpcMetrics) Collect(ch chan<- prometheus.Metric) {
	m.started.Collect(ch)
	m.handled.Collect(ch)
	m.received.Collect(ch)
	m.sent.Collect(ch)
	m.seconds.Collect(ch)
}

// initialize creates every series of every method registered on gs so far
// (every code of grpc_server_handled_total included), so dashboards have
// them from the first scrape, and keeps their handles for the calls.
func (m *grpcMetrics) initialize(gs *grpc.Server) {
	for service, info := range gs.GetServiceInfo() {
		for _, mi := range info.Methods {
			full := "/" + service + "/" + mi.Name
			m.methods[full] = m.newMethod(methodType(mi.IsClientStream, mi.IsServerStream), service, mi.Name)
		}
	}
}

func (m *grpcMetrics) newMethod(typ, service, name string) *methodMetrics {
	mm := &methodMetrics{
		started:  m.started.WithLabelValues(typ, service, name),
		received: m.received.WithLabelValues(typ, service, name),
		sent:     m.sent.WithLabelValues(typ, service, name),
		seconds:  m.seconds.WithLabelValues(typ, service, name),
		m:        m, typ: typ, service: service, name: name,
	}
	for c := range mm.handled {
		mm.handled[c] = m.handled.WithLabelValues(typ, service, name, codes.Code(c).String())
	}
	return mm
}

// method returns the series of fullMethod: the prepared handles, or for a
// method registered after initialize, handles looked up now.
func (m *grpcMetrics) method(fullMethod string, clientStream, serverStream bool) *methodMetrics {
	if mm, ok := m.methods[fullMethod]; ok {
		return mm
	}
	service, name := splitMethod(fullMethod)
	return m.newMethod(methodType(clientStream, serverStream), service, name)
}

// handledWith counts a call that ended with code c.
func (mm *methodMetrics) handledWith(c codes.Code) prometheus.Counter {
	if int(c) < len(mm.handled) {
		return mm.handled[c]
	}
	return mm.m.handled.WithLabelValues(mm.typ, mm.service, mm.name, c.String())
}

// code is the status code a call ended with, as grpc-go itself reports it
// (and the provider counted it): context errors count as Canceled /
// DeadlineExceeded.
func code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}

// methodType is the grpc_type label.
func methodType(clientStream, serverStream bool) string {
	switch {
	case !clientStream && !serverStream:
		return "unary"
	case clientStream && !serverStream:
		return "client_stream"
	case !clientStream && serverStream:
		return "server_stream"
	}
	return "bidi_stream"
}

// splitMethod splits "/pkg.Service/Method" into its service and method.
func splitMethod(fullMethod string) (string, string) {
	fullMethod = strings.TrimPrefix(fullMethod, "/")
	if i := strings.Index(fullMethod, "/"); i >= 0 {
		return fullMethod[:i], fullMethod[i+1:]
	}
	return "unknown", "unknown"
}

// metricsStream records the gRPC series of a streaming call.
func (a *API) metricsStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	mm := a.grpcMetrics.method(info.FullMethod, info.IsClientStream, info.IsServerStream)
	mm.started.Inc()
	err := handler(srv, monitoredStream{ServerStream: ss, mm: mm})
	mm.handledWith(code(err)).Inc()
	mm.seconds.Observe(time.Since(start).Seconds())
	return err
}

// monitoredStream counts a stream's messages.
type monitoredStream struct {
	grpc.ServerStream
	mm *methodMetrics
}

func (s monitoredStream) SendMsg(msg any) error {
	err := s.ServerStream.SendMsg(msg)
	if err == nil {
		s.mm.sent.Inc()
	}
	return err
}

func (s monitoredStream) RecvMsg(msg any) error {
	err := s.ServerStream.RecvMsg(msg)
	if err == nil {
		s.mm.received.Inc()
	}
	return err
}
