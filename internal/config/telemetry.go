package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Telemetry is the `telemetry` section: OpenTelemetry tracing. Every field
// left out falls back to the standard OTEL_* environment variables (see
// internal/telemetry), so an absent section with no OTEL_* variable set
// means tracing is off.
type Telemetry struct {
	// Enabled turns tracing on (true) or off (false) whatever the
	// environment says; nil leaves it to the environment.
	Enabled *bool
	// Endpoint is the OTLP collector's base URL, as
	// OTEL_EXPORTER_OTLP_ENDPOINT (http://collector:4317); empty = env.
	Endpoint string
	// Protocol is "grpc" or "http/protobuf"; empty = env, then http/protobuf.
	Protocol string
	// Insecure sends without TLS to an https-less endpoint; nil = env /
	// the endpoint's scheme.
	Insecure *bool
	// Headers are sent with every export. Values may reference ${VAR};
	// they are expanded when tracing starts and never logged.
	Headers map[string]string
	// SampleRatio samples that share of new traces (parent-based: a call
	// whose caller sampled it is sampled); nil = OTEL_TRACES_SAMPLER, then
	// every trace.
	SampleRatio *float64
	// ServiceName is the resource's service.name; empty = OTEL_SERVICE_NAME,
	// then "toolnexus".
	ServiceName string
}

// TelemetryProtocols are the OTLP protocols the exporter speaks.
var TelemetryProtocols = []string{"grpc", "http/protobuf"}

func parseTelemetry(raw json.RawMessage) (Telemetry, error) {
	var t Telemetry
	if raw == nil {
		return t, nil
	}
	var r struct {
		Enabled     *bool             `json:"enabled"`
		Endpoint    string            `json:"endpoint"`
		Protocol    string            `json:"protocol"`
		Insecure    *bool             `json:"insecure"`
		Headers     map[string]string `json:"headers"`
		SampleRatio *float64          `json:"sampleRatio"`
		ServiceName string            `json:"serviceName"`
	}
	if err := strictDecode("telemetry", raw, &r); err != nil {
		return t, err
	}
	if r.Endpoint != "" {
		u, err := url.Parse(r.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return t, keyErr("telemetry.endpoint", "%q is not an http:// or https:// URL (e.g. http://otel-collector:4317)", r.Endpoint)
		}
	}
	if r.Protocol != "" && r.Protocol != "grpc" && r.Protocol != "http/protobuf" {
		return t, keyErr("telemetry.protocol", "%q is not one of %s", r.Protocol, strings.Join(TelemetryProtocols, ", "))
	}
	if r.SampleRatio != nil && (*r.SampleRatio < 0 || *r.SampleRatio > 1) {
		return t, keyErr("telemetry.sampleRatio", "must be between 0 and 1 (1 = every trace)")
	}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return t, keyErr(field.Join("telemetry.headers", k), "is not a valid header name")
		}
		if strings.ContainsAny(r.Headers[k], "\r\n") {
			return t, keyErr(field.Join("telemetry.headers", k), "must be one line")
		}
	}
	t = Telemetry{Enabled: r.Enabled, Endpoint: r.Endpoint, Protocol: r.Protocol, Insecure: r.Insecure,
		Headers: r.Headers, SampleRatio: r.SampleRatio, ServiceName: r.ServiceName}
	return t, nil
}

// Audit is the `audit` section: one JSON line per call, reload and
// session deletion. Absent = no audit log.
type Audit struct {
	// Enabled is true when the section is present, unless it says
	// "enabled": false.
	Enabled bool
	// Path is the file the lines are appended to (relative to the config
	// file); empty = standard error.
	Path string
	// Arguments puts each call's arguments in its line. Off by default:
	// arguments may hold whatever the model wrote (size and SHA-256 are
	// always recorded).
	Arguments bool
}

func parseAudit(raw json.RawMessage) (Audit, error) {
	var a Audit
	if raw == nil {
		return a, nil
	}
	var r struct {
		Enabled   *bool  `json:"enabled"`
		Path      string `json:"path"`
		Arguments bool   `json:"arguments"`
	}
	if err := strictDecode("audit", raw, &r); err != nil {
		return a, err
	}
	a = Audit{Enabled: r.Enabled == nil || *r.Enabled, Path: r.Path, Arguments: r.Arguments}
	if strings.ContainsRune(a.Path, 0) {
		return a, keyErr("audit.path", "must not contain a NUL byte")
	}
	return a, nil
}

// AuditPath is audit.path made absolute against the config's directory;
// empty for standard error.
func (c *Config) AuditPath() string { return c.Resolve(c.Audit.Path) }

// String names the section's settings without any header value.
func (t Telemetry) String() string {
	return fmt.Sprintf("Telemetry{endpoint=%q protocol=%q headers=%d}", t.Endpoint, t.Protocol, len(t.Headers))
}
