package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
)

// Defaults and the closed vocabularies of a declaration.
const (
	DefaultTimeoutMillis = 30000
	DefaultMethod        = "GET"

	BodyJSON = "json"
	BodyForm = "form"
	BodyRaw  = "raw"

	ResultText       = "text"
	ResultJSON       = "json"
	ResultStatusText = "status+text"
)

var (
	methods     = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
	bodyModes   = []string{BodyJSON, BodyForm, BodyRaw}
	resultModes = []string{ResultText, ResultJSON, ResultStatusText}

	toolKeys    = []string{"name", "description", "method", "url", "headers", "query", "body", "inputSchema", "timeout", "resultMode", "tokenExchange"}
	openapiKeys = []string{"spec", "baseUrl", "headers", "prefix", "operations", "timeout", "tokenExchange"}

	validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
)

// Config is the `http` and `openapi` sections together. It marshals to the
// same JSON for the same input (maps are key-sorted by encoding/json), and
// it keeps `${VAR}` references as written: the server fingerprints it to
// spot changes on reload, and an expanded secret must never sit in it.
type Config struct {
	Tools   []ToolConfig    `json:"tools,omitempty"`
	OpenAPI []OpenAPIConfig `json:"openapi,omitempty"`
}

// ToolConfig is one declared HTTP tool (an entry of the `http` list), with
// defaults applied: Method upper-case, Body, Timeout and ResultMode set.
type ToolConfig struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers,omitempty"`
	Query       []string          `json:"query,omitempty"`
	Body        string            `json:"body"`
	InputSchema json.RawMessage   `json:"inputSchema,omitempty"`
	Timeout     int               `json:"timeout"`
	ResultMode  string            `json:"resultMode"`
	// TokenExchange sends the caller's identity, exchanged (RFC 8693).
	TokenExchange *tokenexchange.Config `json:"tokenExchange,omitempty"`
}

// OpenAPIConfig is one imported spec (an entry of the `openapi` list).
type OpenAPIConfig struct {
	// Spec is a file path (relative to the config's directory) or an
	// http(s) URL.
	Spec string `json:"spec"`
	// BaseURL replaces the spec's servers entry when set.
	BaseURL string            `json:"baseUrl,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Prefix is put before every tool name (then sanitized with it).
	Prefix string `json:"prefix,omitempty"`
	// Operations is a filter map on operationId (see sources.Filter).
	Operations sources.Filter `json:"operations,omitempty"`
	// Timeout bounds fetching the spec and each call, in ms.
	Timeout int `json:"timeout"`
	// TokenExchange sends the caller's identity to every operation,
	// exchanged (RFC 8693); fetching the spec does not use it.
	TokenExchange *tokenexchange.Config `json:"tokenExchange,omitempty"`
}

// ParseConfig reads the `http` and `openapi` sections (either may be nil).
// Errors are *field.Error: those about the http list keyed relative to it
// ("[2].method"), those about the openapi list keyed from "openapi"
// ("openapi[0].spec"). ParseTools and ParseOpenAPI read one section each.
// There are no parse-time warnings today (unknown operations in a filter are
// only known once the spec loads, and are logged then); the slice is kept
// for the caller's uniform handling.
func ParseConfig(httpRaw, openapiRaw json.RawMessage) (Config, []string, error) {
	tools, err := ParseTools(httpRaw)
	if err != nil {
		return Config{}, nil, err
	}
	specs, err := ParseOpenAPI(openapiRaw)
	if err != nil {
		return Config{}, nil, field.Under("openapi", err)
	}
	return Config{Tools: tools, OpenAPI: specs}, nil, nil
}

// ParseTools reads the `http` section: the declared tools. Errors are keyed
// relative to the section ("[2].method").
func ParseTools(raw json.RawMessage) ([]ToolConfig, error) {
	if field.IsNull(raw) {
		return nil, nil
	}
	items, err := list(raw, "", "must be a list of tool declarations, e.g. [{\"name\": \"get_post\", \"url\": \"https://api.example.test/posts/{id}\"}]")
	if err != nil {
		return nil, err
	}
	var tools []ToolConfig
	seen := map[string]int{}
	for i, raw := range items {
		at := fmt.Sprintf("[%d]", i)
		tc, err := parseTool(at, raw)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[tc.Name]; dup {
			return nil, field.Errorf(at+".name", "%q is already declared at [%d]; tool names must be unique", tc.Name, j)
		}
		seen[tc.Name] = i
		tools = append(tools, tc)
	}
	return tools, nil
}

// ParseOpenAPI reads the `openapi` section: the specs to import. Errors are
// keyed relative to the section ("[0].spec").
func ParseOpenAPI(raw json.RawMessage) ([]OpenAPIConfig, error) {
	if field.IsNull(raw) {
		return nil, nil
	}
	items, err := list(raw, "", "must be a list of specs, e.g. [{\"spec\": \"./petstore.yaml\"}]")
	if err != nil {
		return nil, err
	}
	var specs []OpenAPIConfig
	for i, raw := range items {
		oc, err := parseOpenAPI(fmt.Sprintf("[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		specs = append(specs, oc)
	}
	return specs, nil
}

func list(raw json.RawMessage, at, hint string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		if at == "" {
			return nil, field.Errorf("", "%s", hint)
		}
		return nil, field.Errorf(at, "%s", hint)
	}
	return items, nil
}

// object decodes one list entry into its keys and rejects unknown keys, so
// a typo ("heders") fails loudly instead of silently dropping a setting.
func object(at string, raw json.RawMessage, known []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, field.Errorf(at, "must be an object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			if s := sources.Suggest(k, known); s != "" {
				return nil, field.Errorf(field.Join(at, k), "unknown key; did you mean %q?", s)
			}
			return nil, field.Errorf(field.Join(at, k), "unknown key; valid keys are %s", strings.Join(known, ", "))
		}
	}
	return m, nil
}

func parseTool(at string, raw json.RawMessage) (ToolConfig, error) {
	m, err := object(at, raw, toolKeys)
	if err != nil {
		return ToolConfig{}, err
	}
	tc := ToolConfig{Method: DefaultMethod, Body: BodyJSON, Timeout: DefaultTimeoutMillis, ResultMode: ResultText}
	if tc.Name, err = field.Object(m).String(at, "name", true); err != nil {
		return tc, err
	}
	if !validName.MatchString(tc.Name) {
		return tc, field.Errorf(at+".name", "%q may only contain letters, digits, _ and - (at most 128 characters)", tc.Name)
	}
	if tc.Description, err = field.Object(m).String(at, "description", false); err != nil {
		return tc, err
	}
	if v, err := field.Object(m).String(at, "method", false); err != nil {
		return tc, err
	} else if v != "" {
		tc.Method = strings.ToUpper(v)
		if !slices.Contains(methods, tc.Method) {
			return tc, field.Errorf(at+".method", "must be one of %s (got %q)", strings.Join(methods, ", "), v)
		}
	}
	if tc.URL, err = field.Object(m).String(at, "url", true); err != nil {
		return tc, err
	}
	if _, err := parseTemplate(tc.URL); err != nil {
		return tc, field.Errorf(at+".url", "%v", err)
	}
	if tc.Headers, err = headers(at, m); err != nil {
		return tc, err
	}
	if tc.TokenExchange, err = tokenexchange.Parse(at, m); err != nil {
		return tc, err
	}
	if raw, ok := m["query"]; ok && !field.IsNull(raw) {
		if err := json.Unmarshal(raw, &tc.Query); err != nil {
			return tc, field.Errorf(at+".query", "must be a list of argument names, e.g. [\"page\", \"limit\"]")
		}
		for _, q := range tc.Query {
			if q == "" {
				return tc, field.Errorf(at+".query", "argument names must not be empty")
			}
		}
	}
	if v, err := field.Object(m).String(at, "body", false); err != nil {
		return tc, err
	} else if v != "" {
		if !slices.Contains(bodyModes, v) {
			return tc, field.Errorf(at+".body", "must be one of %s (got %q)", strings.Join(bodyModes, ", "), v)
		}
		tc.Body = v
	}
	if raw, ok := m["inputSchema"]; ok && !field.IsNull(raw) {
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || probe == nil {
			return tc, field.Errorf(at+".inputSchema", "must be a JSON Schema object, e.g. {\"type\": \"object\", \"properties\": {...}}")
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw)
		tc.InputSchema = buf.Bytes()
	}
	if tc.Timeout, err = field.Object(m).Millis(at, "timeout", tc.Timeout, "must be a positive whole number of milliseconds, e.g. 30000"); err != nil {
		return tc, err
	}
	if v, err := field.Object(m).String(at, "resultMode", false); err != nil {
		return tc, err
	} else if v != "" {
		if !slices.Contains(resultModes, v) {
			return tc, field.Errorf(at+".resultMode", "must be one of %s (got %q)", strings.Join(resultModes, ", "), v)
		}
		tc.ResultMode = v
	}
	return tc, nil
}

func parseOpenAPI(at string, raw json.RawMessage) (OpenAPIConfig, error) {
	m, err := object(at, raw, openapiKeys)
	if err != nil {
		return OpenAPIConfig{}, err
	}
	oc := OpenAPIConfig{Timeout: DefaultTimeoutMillis}
	if oc.Spec, err = field.Object(m).String(at, "spec", true); err != nil {
		return oc, err
	}
	if oc.BaseURL, err = field.Object(m).String(at, "baseUrl", false); err != nil {
		return oc, err
	}
	if oc.BaseURL != "" {
		if u, err := url.Parse(oc.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return oc, field.Errorf(at+".baseUrl", "must be an absolute http or https URL, e.g. \"https://api.example.test/v1\" (got %q)", oc.BaseURL)
		}
	}
	if oc.Headers, err = headers(at, m); err != nil {
		return oc, err
	}
	if oc.TokenExchange, err = tokenexchange.Parse(at, m); err != nil {
		return oc, err
	}
	if oc.Prefix, err = field.Object(m).String(at, "prefix", false); err != nil {
		return oc, err
	}
	if raw, ok := m["operations"]; ok && !field.IsNull(raw) {
		if err := json.Unmarshal(raw, &oc.Operations); err != nil {
			return oc, field.Errorf(at+".operations", "must be an object of operationId to true/false, e.g. {\"deletePet\": false}")
		}
	}
	if oc.Timeout, err = field.Object(m).Millis(at, "timeout", oc.Timeout, "must be a positive whole number of milliseconds, e.g. 30000"); err != nil {
		return oc, err
	}
	return oc, nil
}

func headers(at string, m map[string]json.RawMessage) (map[string]string, error) {
	raw, ok := m["headers"]
	if !ok || field.IsNull(raw) {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, field.Errorf(at+".headers", "must be an object of header names to string values, e.g. {\"Authorization\": \"Bearer ${TOKEN}\"}")
	}
	for k := range h {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return nil, field.Errorf(at+".headers", "%q is not a valid header name", k)
		}
	}
	if len(h) == 0 {
		return nil, nil
	}
	return h, nil
}
