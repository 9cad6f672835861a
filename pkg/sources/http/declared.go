package http

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// declared builds the tool for one `http` entry. The only thing that can
// fail here is a ${VAR} in a header that is not set; the error names the
// header and the variable, never a value.
func declared(tc ToolConfig, client *http.Client, maxBytes int) (tool.Tool, error) {
	tmpl, err := parseTemplate(tc.URL)
	if err != nil { // ParseConfig already checked; a hand-made Config may not have been
		return tool.Tool{}, fmt.Errorf("http tool %q: url: %v", tc.Name, err)
	}
	hdr, err := expandHeaders(tc.Headers)
	if err != nil {
		return tool.Tool{}, fmt.Errorf("http tool %q: %w", tc.Name, err)
	}
	if client, err = withExchange("http tool "+tc.Name, tc.TokenExchange, client); err != nil {
		return tool.Tool{}, err
	}
	method := tc.Method
	if method == "" {
		method = DefaultMethod
	}
	e := &endpoint{
		name:        tc.Name,
		method:      method,
		url:         tmpl,
		headers:     hdr,
		redact:      sources.RedactorFor(tc.Headers),
		query:       map[string]bool{},
		restToQuery: method == http.MethodGet || method == http.MethodHead,
		timeout:     millisOr(tc.Timeout),
		resultMode:  tc.ResultMode,
		client:      client,
		maxBytes:    maxBytes,
	}
	for _, q := range tc.Query {
		e.query[q] = true
	}
	if !e.restToQuery {
		e.body = tc.Body
		if e.body == "" {
			e.body = BodyJSON
		}
		if e.body == BodyRaw {
			e.bodyArg = "body"
		}
	}
	schema := tc.InputSchema
	if len(schema) == 0 {
		schema = deriveSchema(tmpl.names, tc.Query, e.body == BodyRaw)
	}
	return tool.New(tc.Name, e.run,
		tool.WithAnnotations(methodHints(method)),
		tool.WithDescription(tc.Description),
		tool.WithInputSchema(schema),
		tool.WithSource(sources.KindHTTP.Name))
}

// deriveSchema is the input schema of a declaration without inputSchema:
// placeholders are required strings, query names optional strings, and a
// raw body is the optional string `body`. Other properties stay allowed,
// because for GET they become query parameters and otherwise body members.
func deriveSchema(placeholders, query []string, rawBody bool) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for _, p := range placeholders {
		props[p] = map[string]any{"type": "string", "description": "Fills {" + p + "} in the URL."}
		required = append(required, p)
	}
	for _, q := range query {
		if _, dup := props[q]; !dup {
			props[q] = map[string]any{"type": "string", "description": "Query parameter."}
		}
	}
	if rawBody {
		if _, dup := props["body"]; !dup {
			props["body"] = map[string]any{"type": "string", "description": "The request body, sent as is."}
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

func expandHeaders(h map[string]string) (http.Header, error) {
	x, err := sources.ExpandHeaders(h)
	if err != nil {
		return nil, err
	}
	out := make(http.Header, len(x))
	for k, v := range x {
		out.Set(k, v)
	}
	return out, nil
}

func millisOr(ms int) time.Duration {
	if ms <= 0 {
		ms = DefaultTimeoutMillis
	}
	return time.Duration(ms) * time.Millisecond
}

// withExchange is client sending the caller's exchanged token, when the
// tool or spec has a tokenExchange; client itself otherwise.
func withExchange(upstream string, cfg *tokenexchange.Config, client *http.Client) (*http.Client, error) {
	if cfg == nil {
		return client, nil
	}
	x, err := tokenexchange.New(upstream, *cfg, client)
	if err != nil {
		return nil, err
	}
	return tokenexchange.Client(client, x), nil
}
