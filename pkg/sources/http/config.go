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

	toolKeys    = []string{"name", "description", "method", "url", "headers", "query", "body", "inputSchema", "timeout", "resultMode"}
	openapiKeys = []string{"spec", "baseUrl", "headers", "prefix", "operations", "timeout"}

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
}

// ParseConfig reads the `http` and `openapi` sections (either may be nil).
// Errors about the http list are keyed relative to it ("[2].method: ..."),
// errors about the openapi list start with "openapi" ("openapi[0].spec: ...").
// There are no parse-time warnings today (unknown operations in a filter are
// only known once the spec loads, and are logged then); the slice is kept
// for the caller's uniform handling.
func ParseConfig(httpRaw, openapiRaw json.RawMessage) (Config, []string, error) {
	var cfg Config
	var warns []string
	if !isNull(httpRaw) {
		items, err := list(httpRaw, "", "must be a list of tool declarations, e.g. [{\"name\": \"get_post\", \"url\": \"https://api.example.test/posts/{id}\"}]")
		if err != nil {
			return Config{}, nil, err
		}
		seen := map[string]int{}
		for i, raw := range items {
			at := fmt.Sprintf("[%d]", i)
			tc, err := parseTool(at, raw)
			if err != nil {
				return Config{}, nil, err
			}
			if j, dup := seen[tc.Name]; dup {
				return Config{}, nil, fmt.Errorf("%s.name: %q is already declared at [%d]; tool names must be unique", at, tc.Name, j)
			}
			seen[tc.Name] = i
			cfg.Tools = append(cfg.Tools, tc)
		}
	}
	if !isNull(openapiRaw) {
		items, err := list(openapiRaw, "openapi", "must be a list of specs, e.g. [{\"spec\": \"./petstore.yaml\"}]")
		if err != nil {
			return Config{}, nil, err
		}
		for i, raw := range items {
			oc, err := parseOpenAPI(fmt.Sprintf("openapi[%d]", i), raw)
			if err != nil {
				return Config{}, nil, err
			}
			cfg.OpenAPI = append(cfg.OpenAPI, oc)
		}
	}
	return cfg, warns, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func list(raw json.RawMessage, at, hint string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		if at == "" {
			return nil, fmt.Errorf("%s", hint)
		}
		return nil, fmt.Errorf("%s: %s", at, hint)
	}
	return items, nil
}

// object decodes one list entry into its keys and rejects unknown keys, so
// a typo ("heders") fails loudly instead of silently dropping a setting.
func object(at string, raw json.RawMessage, known []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: must be an object", at)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			msg := fmt.Sprintf("%s.%s: unknown key; valid keys are %s", at, k, strings.Join(known, ", "))
			if s := sources.Suggest(k, known); s != "" {
				msg = fmt.Sprintf("%s.%s: unknown key; did you mean %q?", at, k, s)
			}
			return nil, fmt.Errorf("%s", msg)
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
	if tc.Name, err = str(at, "name", m, true); err != nil {
		return tc, err
	}
	if !validName.MatchString(tc.Name) {
		return tc, fmt.Errorf("%s.name: %q may only contain letters, digits, _ and - (at most 128 characters)", at, tc.Name)
	}
	if tc.Description, err = str(at, "description", m, false); err != nil {
		return tc, err
	}
	if v, err := str(at, "method", m, false); err != nil {
		return tc, err
	} else if v != "" {
		tc.Method = strings.ToUpper(v)
		if !slices.Contains(methods, tc.Method) {
			return tc, fmt.Errorf("%s.method: must be one of %s (got %q)", at, strings.Join(methods, ", "), v)
		}
	}
	if tc.URL, err = str(at, "url", m, true); err != nil {
		return tc, err
	}
	if _, err := parseTemplate(tc.URL); err != nil {
		return tc, fmt.Errorf("%s.url: %v", at, err)
	}
	if tc.Headers, err = headers(at, m); err != nil {
		return tc, err
	}
	if raw, ok := m["query"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &tc.Query); err != nil {
			return tc, fmt.Errorf("%s.query: must be a list of argument names, e.g. [\"page\", \"limit\"]", at)
		}
		for _, q := range tc.Query {
			if q == "" {
				return tc, fmt.Errorf("%s.query: argument names must not be empty", at)
			}
		}
	}
	if v, err := str(at, "body", m, false); err != nil {
		return tc, err
	} else if v != "" {
		if !slices.Contains(bodyModes, v) {
			return tc, fmt.Errorf("%s.body: must be one of %s (got %q)", at, strings.Join(bodyModes, ", "), v)
		}
		tc.Body = v
	}
	if raw, ok := m["inputSchema"]; ok && !isNull(raw) {
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || probe == nil {
			return tc, fmt.Errorf("%s.inputSchema: must be a JSON Schema object, e.g. {\"type\": \"object\", \"properties\": {...}}", at)
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw)
		tc.InputSchema = buf.Bytes()
	}
	if tc.Timeout, err = millis(at, "timeout", m, tc.Timeout); err != nil {
		return tc, err
	}
	if v, err := str(at, "resultMode", m, false); err != nil {
		return tc, err
	} else if v != "" {
		if !slices.Contains(resultModes, v) {
			return tc, fmt.Errorf("%s.resultMode: must be one of %s (got %q)", at, strings.Join(resultModes, ", "), v)
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
	if oc.Spec, err = str(at, "spec", m, true); err != nil {
		return oc, err
	}
	if oc.BaseURL, err = str(at, "baseUrl", m, false); err != nil {
		return oc, err
	}
	if oc.BaseURL != "" {
		if u, err := url.Parse(oc.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return oc, fmt.Errorf("%s.baseUrl: must be an absolute http or https URL, e.g. \"https://api.example.test/v1\" (got %q)", at, oc.BaseURL)
		}
	}
	if oc.Headers, err = headers(at, m); err != nil {
		return oc, err
	}
	if oc.Prefix, err = str(at, "prefix", m, false); err != nil {
		return oc, err
	}
	if raw, ok := m["operations"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &oc.Operations); err != nil {
			return oc, fmt.Errorf("%s.operations: must be an object of operationId to true/false, e.g. {\"deletePet\": false}", at)
		}
	}
	if oc.Timeout, err = millis(at, "timeout", m, oc.Timeout); err != nil {
		return oc, err
	}
	return oc, nil
}

func str(at, key string, m map[string]json.RawMessage, required bool) (string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		if required {
			return "", fmt.Errorf("%s.%s: is required", at, key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s.%s: must be a string", at, key)
	}
	if required && strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s.%s: must not be empty", at, key)
	}
	return s, nil
}

func headers(at string, m map[string]json.RawMessage) (map[string]string, error) {
	raw, ok := m["headers"]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("%s.headers: must be an object of header names to string values, e.g. {\"Authorization\": \"Bearer ${TOKEN}\"}", at)
	}
	for k := range h {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return nil, fmt.Errorf("%s.headers: %q is not a valid header name", at, k)
		}
	}
	if len(h) == 0 {
		return nil, nil
	}
	return h, nil
}

func millis(at, key string, m map[string]json.RawMessage, def int) (int, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f <= 0 || f != float64(int(f)) {
		return 0, fmt.Errorf("%s.%s: must be a positive whole number of milliseconds, e.g. 30000", at, key)
	}
	return int(f), nil
}
