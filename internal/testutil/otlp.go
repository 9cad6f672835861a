package testutil

import (
	"context"
	"encoding/hex"
	"net"
	"strconv"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// OTLPReceiver is a real OTLP/gRPC trace receiver on loopback: the
// collector's TraceService, keeping every span it is sent.
type OTLPReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	// Endpoint is its address as an http:// URL (OTLP over gRPC without TLS).
	Endpoint string

	srv     *grpc.Server
	done    chan struct{}
	discard bool // count spans without keeping them

	mu    sync.Mutex
	spans []Span
	count int
}

// Span is one received span, its ids in hex and its attributes as strings.
type Span struct {
	Name                   string
	TraceID, SpanID        string
	ParentSpanID           string
	Kind                   tracepb.Span_SpanKind
	StatusCode             tracepb.Status_StatusCode
	Attributes             map[string]string
	Scope, ServiceName     string
	StartUnixNano, EndNano uint64
}

// StartOTLPReceiver serves a receiver until the test ends.
func StartOTLPReceiver(t testing.TB) *OTLPReceiver {
	t.Helper()
	r, err := NewOTLPReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// NewOTLPReceiver serves a receiver until Stop (for programs that are not
// tests, such as the benchmarks).
func NewOTLPReceiver() (*OTLPReceiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &OTLPReceiver{Endpoint: "http://" + lis.Addr().String(), srv: grpc.NewServer(), done: make(chan struct{})}
	collectortrace.RegisterTraceServiceServer(r.srv, r)
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(lis)
	}()
	return r, nil
}

// Stop ends the receiver.
func (r *OTLPReceiver) Stop() {
	r.srv.Stop()
	<-r.done
}

// Count is how many spans have been received.
func (r *OTLPReceiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Export implements the collector's TraceService.
func (r *OTLPReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	discard := r.discard
	r.mu.Unlock()
	if discard {
		n := 0
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				n += len(ss.GetSpans())
			}
		}
		r.mu.Lock()
		r.count += n
		r.mu.Unlock()
		return &collectortrace.ExportTraceServiceResponse{}, nil
	}
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := attrString(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				s := Span{
					Name: sp.GetName(), TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()), Kind: sp.GetKind(), StatusCode: sp.GetStatus().GetCode(),
					Attributes: map[string]string{}, Scope: ss.GetScope().GetName(), ServiceName: service,
					StartUnixNano: sp.GetStartTimeUnixNano(), EndNano: sp.GetEndTimeUnixNano(),
				}
				for _, kv := range sp.GetAttributes() {
					s.Attributes[kv.GetKey()] = anyString(kv.GetValue())
				}
				got = append(got, s)
			}
		}
	}
	r.mu.Lock()
	r.count += len(got)
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Spans returns every span received so far.
func (r *OTLPReceiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Discard stops keeping spans (they are still counted), so a benchmark
// exporting millions does not hold them all.
func (r *OTLPReceiver) Discard() {
	r.mu.Lock()
	r.discard = true
	r.mu.Unlock()
}

// Reset forgets the spans received so far.
func (r *OTLPReceiver) Reset() {
	r.mu.Lock()
	r.spans = nil
	r.mu.Unlock()
}

func attrString(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return anyString(kv.GetValue())
		}
	}
	return ""
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}
