package grpcapi

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcMetrics are the standard gRPC server series (the names, labels and
// help texts of go-grpc-middleware's Prometheus provider, which dashboards
// expect): grpc_server_started_total, grpc_server_handled_total,
// grpc_server_msg_received_total, grpc_server_msg_sent_total and the
// grpc_server_handling_seconds histogram.
//
// Unlike the generic provider, which hashes four or five label sets and
// allocates a reporter on every call, the handles of every registered
// method are looked up once, at Register; a call then costs a map read and
// atomic adds.
type grpcMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	seconds                          *prometheus.HistogramVec

	// methods is written once, by Register, before the server serves, and
	// only read afterwards. Methods registered later (health, reflection)
	// take the slower label lookups.
	methods map[string]*methodMetrics
}

// methodMetrics are one method's series.
type methodMetrics struct {
	started, received, sent prometheus.Counter
	seconds                 prometheus.Observer
	handled                 [codes.Unauthenticated + 1]prometheus.Counter // by code
	// vecs and labels, for a code beyond the table (never from grpc-go).
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
			Buckets: []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 30, 120},
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

// initialize creates every series of every method registered on gs so far,
// so dashboards have them from the first scrape, and keeps their handles.
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

func (mm *methodMetrics) handledWith(c codes.Code) prometheus.Counter {
	if int(c) < len(mm.handled) {
		return mm.handled[c]
	}
	return mm.m.handled.WithLabelValues(mm.typ, mm.service, mm.name, c.String())
}

// code is the status code a call ended with, as grpc-go itself reports it:
// context errors count as Canceled / DeadlineExceeded.
func code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}

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
