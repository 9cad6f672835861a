package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// maxSpecBytes bounds one spec document (or one file it references).
const maxSpecBytes = 16 << 20

// specLoader imports one `openapi` entry.
type specLoader struct {
	at      string // "openapi[0]", for messages
	cfg     OpenAPIConfig
	baseDir string
	client  *http.Client
	// callClient makes the operations' calls (client with a token
	// exchange, when the spec has one).
	callClient *http.Client
	maxBytes   int
	redact     sources.Redactor
}

// load fetches and parses the spec and builds one tool per kept operation.
// warns are per-operation problems (skipped operations, unknown names in
// the operations filter); err means the whole spec could not be used.
func (l *specLoader) load(ctx context.Context) (tools []tool.Tool, warns []string, err error) {
	hdr, err := expandHeaders(l.cfg.Headers)
	if err != nil {
		return nil, nil, err
	}
	l.redact = sources.RedactorFor(l.cfg.Headers)
	timeout := millisOr(l.cfg.Timeout)
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	loader := openapi3.NewLoader()
	loader.Context = lctx
	loader.IsExternalRefsAllowed = true
	var doc *openapi3.T
	var specURL *url.URL
	if isURL(l.cfg.Spec) {
		specURL, err = url.Parse(l.cfg.Spec)
		if err != nil {
			return nil, nil, fmt.Errorf("spec is not a valid URL: %v", err)
		}
		loader.ReadFromURIFunc = l.remoteReader(lctx, specURL, hdr)
		doc, err = loader.LoadFromURI(specURL)
	} else {
		path := l.cfg.Spec
		if !filepath.IsAbs(path) {
			path = filepath.Join(l.baseDir, path)
		}
		loader.ReadFromURIFunc = localReader(filepath.Dir(path))
		doc, err = loader.LoadFromFile(path)
	}
	if err != nil {
		if lctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("loading the spec timed out after %dms; raise timeout or check the address", timeout.Milliseconds())
		}
		return nil, nil, fmt.Errorf("cannot load the spec: %v", err)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, nil, fmt.Errorf("the spec has no paths")
	}

	base, err := l.baseURL(doc, specURL)
	if err != nil {
		return nil, nil, err
	}

	var ids []string
	pathMap := doc.Paths.Map()
	paths := make([]string, 0, len(pathMap))
	for p := range pathMap {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		item := pathMap[p]
		ops := item.Operations()
		methodsHere := make([]string, 0, len(ops))
		for m := range ops {
			methodsHere = append(methodsHere, m)
		}
		sort.Strings(methodsHere)
		for _, m := range methodsHere {
			op := ops[m]
			id := op.OperationID
			if id == "" {
				id = derivedID(m, p)
			}
			ids = append(ids, id)
			if !l.cfg.Operations.Keep(id) {
				continue
			}
			t, opWarns, err := l.operation(base, p, strings.ToUpper(m), id, item, op, hdr, timeout)
			warns = append(warns, opWarns...)
			if err != nil {
				warns = append(warns, fmt.Sprintf("%s: operation %s skipped: %v", l.at, id, err))
				continue
			}
			tools = append(tools, t)
		}
	}
	warns = append(warns, l.cfg.Operations.Unknown(l.at+".operations", ids)...)
	return tools, warns, nil
}

// baseURL is baseUrl from the config, else the spec's first server (its
// variables at their defaults, a relative URL resolved against the spec's
// own URL).
func (l *specLoader) baseURL(doc *openapi3.T, specURL *url.URL) (string, error) {
	if l.cfg.BaseURL != "" {
		return strings.TrimRight(l.cfg.BaseURL, "/"), nil
	}
	if len(doc.Servers) == 0 || doc.Servers[0] == nil || doc.Servers[0].URL == "" {
		return "", fmt.Errorf("the spec lists no servers; set baseUrl")
	}
	srv := doc.Servers[0]
	raw := srv.URL
	for name, v := range srv.Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the spec's server URL %q is not valid (%v); set baseUrl", raw, err)
	}
	if !u.IsAbs() {
		if specURL == nil {
			return "", fmt.Errorf("the spec's server URL %q is relative and the spec is a local file; set baseUrl", raw)
		}
		u = specURL.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("the spec's server URL %q is not http or https; set baseUrl", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// operation turns one operation into a tool. Path, query and header
// parameters become top-level properties. A JSON or form request body whose
// schema is a plain object is merged in property by property when no name
// clashes with a parameter; any other body is nested under `body` (or
// `requestBody` if a parameter is already called body).
func (l *specLoader) operation(base, path, method, id string, item *openapi3.PathItem, op *openapi3.Operation, hdr http.Header, timeout time.Duration) (tool.Tool, []string, error) {
	name := tool.Sanitize(l.cfg.Prefix + id)
	tmpl, err := parseTemplate(base + path)
	if err != nil {
		return tool.Tool{}, nil, err
	}
	e := &endpoint{
		name:       name,
		method:     method,
		url:        tmpl,
		headers:    hdr,
		redact:     l.redact,
		headerArgs: map[string]string{},
		query:      map[string]bool{},
		timeout:    timeout,
		resultMode: ResultText,
		client:     l.callClient,
		maxBytes:   l.maxBytes,
	}
	var warns []string
	props := map[string]json.RawMessage{}
	var required []string
	for _, p := range parameters(item, op) {
		if _, dup := props[p.Name]; dup {
			warns = append(warns, fmt.Sprintf("%s: operation %s: parameter %q (in %s) clashes with another parameter of that name; left out", l.at, id, p.Name, p.In))
			continue
		}
		switch p.In {
		case openapi3.ParameterInPath:
			required = append(required, p.Name)
		case openapi3.ParameterInQuery:
			e.query[p.Name] = true
		case openapi3.ParameterInHeader:
			e.headerArgs[p.Name] = http.CanonicalHeaderKey(p.Name)
		default:
			continue // cookies are not sent
		}
		if p.Required && p.In != openapi3.ParameterInPath {
			required = append(required, p.Name)
		}
		props[p.Name] = paramSchema(p)
	}
	// A path placeholder the spec forgot to declare is still required.
	for _, n := range tmpl.names {
		if _, ok := props[n]; !ok {
			props[n] = json.RawMessage(`{"type":"string"}`)
			required = append(required, n)
		}
	}

	if rb := op.RequestBody; rb != nil && rb.Value != nil && len(rb.Value.Content) > 0 {
		mediaType, media := pickMedia(rb.Value.Content)
		var schema *openapi3.SchemaRef
		if media != nil {
			schema = inline(media.Schema, map[*openapi3.Schema]bool{})
		}
		switch {
		case isJSONMedia(mediaType):
			e.body = BodyJSON
			e.contentType = mediaType // application/json, or a +json type such as merge-patch
		case mediaType == "application/x-www-form-urlencoded":
			e.body = BodyForm
		default:
			e.body = BodyRaw
			e.contentType = mediaType
			if strings.Contains(mediaType, "*") {
				e.contentType = "application/octet-stream"
			}
		}
		if e.body != BodyRaw && mergeable(schema, props) {
			for k, v := range schema.Value.Properties {
				b, _ := json.Marshal(v)
				props[k] = b
			}
			if rb.Value.Required {
				required = append(required, schema.Value.Required...)
			}
		} else {
			key := "body"
			if _, clash := props[key]; clash {
				key = "requestBody"
			}
			e.bodyArg = key
			var b []byte
			if e.body == BodyRaw {
				b, _ = json.Marshal(map[string]string{"type": "string",
					"description": "The request body (" + mediaType + "), sent as is."})
			} else if schema != nil && schema.Value != nil {
				s := *schema.Value
				if s.Description == "" {
					s.Description = rb.Value.Description
				}
				b, _ = json.Marshal(&s)
			} else {
				b = []byte(`{}`)
			}
			props[key] = b
			if rb.Value.Required {
				required = append(required, key)
			}
		}
	}

	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = dedupe(required)
	}
	schemaJSON, err := json.Marshal(s)
	if err != nil {
		return tool.Tool{}, warns, fmt.Errorf("cannot build its input schema: %v", err)
	}
	t, err := tool.New(name, e.run,
		tool.WithAnnotations(methodHints(method)),
		tool.WithDescription(describe(op, method, path)),
		tool.WithInputSchema(schemaJSON),
		tool.WithSource(sources.KindHTTP.Name))
	return t, warns, err
}

// parameters merges path-level and operation-level parameters; the
// operation's win for the same name and location, as the spec says.
func parameters(item *openapi3.PathItem, op *openapi3.Operation) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	index := map[string]int{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			key := p.In + "\x00" + p.Name
			if i, ok := index[key]; ok {
				out[i] = p
				continue
			}
			index[key] = len(out)
			out = append(out, p)
		}
	}
	return out
}

func paramSchema(p *openapi3.Parameter) json.RawMessage {
	ref := p.Schema
	if ref == nil {
		for _, mt := range sortedMedia(p.Content) {
			ref = p.Content[mt].Schema
			break
		}
	}
	var s openapi3.Schema
	if in := inline(ref, map[*openapi3.Schema]bool{}); in != nil && in.Value != nil {
		s = *in.Value
	} else {
		s.Type = &openapi3.Types{"string"}
	}
	if s.Description == "" {
		s.Description = p.Description
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return json.RawMessage(`{"type":"string"}`)
	}
	return b
}

// pickMedia prefers JSON, then a form, then the first other media type.
func pickMedia(c openapi3.Content) (string, *openapi3.MediaType) {
	keys := sortedMedia(c)
	for _, k := range keys {
		if isJSONMedia(k) {
			return k, c[k]
		}
	}
	for _, k := range keys {
		if strings.EqualFold(k, "application/x-www-form-urlencoded") {
			return "application/x-www-form-urlencoded", c[k]
		}
	}
	return keys[0], c[keys[0]]
}

func sortedMedia(c openapi3.Content) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isJSONMedia(mt string) bool {
	mt = strings.ToLower(strings.TrimSpace(strings.Split(mt, ";")[0]))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// mergeable: a plain object body whose property names clash with no
// parameter can be flattened into the arguments.
func mergeable(schema *openapi3.SchemaRef, props map[string]json.RawMessage) bool {
	if schema == nil || schema.Value == nil {
		return false
	}
	s := schema.Value
	if len(s.Properties) == 0 || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 {
		return false
	}
	if s.Type != nil && !s.Type.Is("object") {
		return false
	}
	for k := range s.Properties {
		if _, clash := props[k]; clash {
			return false
		}
	}
	return true
}

func describe(op *openapi3.Operation, method, path string) string {
	sum, desc := strings.TrimSpace(op.Summary), strings.TrimSpace(op.Description)
	switch {
	case sum != "" && desc != "" && desc != sum:
		return sum + "\n\n" + desc
	case sum != "":
		return sum
	case desc != "":
		return desc
	}
	return method + " " + path
}

// derivedID names an operation without an operationId: the lowercase method
// and the path's words, e.g. GET /pets/{petId} → get_pets_petId.
func derivedID(method, path string) string {
	words := []string{strings.ToLower(method)}
	for _, seg := range strings.Split(path, "/") {
		seg = strings.Trim(seg, "{}")
		if seg != "" {
			words = append(words, seg)
		}
	}
	return strings.Join(words, "_")
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// remoteReader fetches the spec and any document it references, but only
// from the spec's own host: a fetched spec is not trusted to make the
// server read other hosts (SSRF) or local files.
func (l *specLoader) remoteReader(ctx context.Context, spec *url.URL, hdr http.Header) openapi3.ReadFromURIFunc {
	return func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host != spec.Host {
			return nil, fmt.Errorf("refusing to read %s: a remote spec may only reference documents on its own host %s", u.Redacted(), spec.Host)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header = hdr.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		req.Header.Set("User-Agent", "toolnexus")
		resp, err := l.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, fmt.Errorf("GET %s: HTTP %d", u.Redacted(), resp.StatusCode)
		}
		return readCapped(resp.Body, u.Redacted())
	}
}

// localReader reads the spec file and files it references, but only inside
// the spec's directory tree.
func localReader(root string) openapi3.ReadFromURIFunc {
	return func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if u.Scheme != "" && u.Scheme != "file" {
			return nil, fmt.Errorf("refusing to read %s: a local spec may only reference local files", u.Redacted())
		}
		p := filepath.Clean(filepath.FromSlash(u.Path))
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("refusing to read %s: outside the spec's directory %s", p, root)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readCapped(f, p)
	}
}

func readCapped(r io.Reader, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSpecBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", what, maxSpecBytes)
	}
	return data, nil
}
