package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// endpoint is everything one HTTP tool needs at call time, worked out once
// when the tool is built: a call only routes arguments and sends.
//
// Argument routing, in order: a URL placeholder's argument fills it and is
// consumed; an argument named in headerArgs becomes that header; one named
// in query (or any, when restToQuery) goes to the query string; the one
// named bodyArg is the whole body; when bodyArg is empty and the endpoint
// has a body, every remaining argument is a member of the body. Whatever is
// left after that is not sent.
type endpoint struct {
	name        string
	method      string
	url         template
	headers     http.Header      // ${VAR} already expanded; never logged
	redact      sources.Redactor // the expanded header secrets, cut from results and errors
	headerArgs  map[string]string
	query       map[string]bool
	restToQuery bool
	body        string // "", BodyJSON, BodyForm or BodyRaw
	bodyArg     string
	contentType string // for BodyJSON and BodyRaw when the headers set none
	timeout     time.Duration
	resultMode  string
	client      *http.Client
	maxBytes    int
}

func (e *endpoint) run(ctx context.Context, call tool.Call) tool.Result {
	var args map[string]json.RawMessage
	if len(call.Arguments) == 0 {
		call.Arguments = json.RawMessage("{}")
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return tool.FailureWith(tool.OutcomeInvalidArguments, e.name+": invalid arguments: expected a JSON object")
	}
	req, res, ok := e.request(ctx, args)
	if !ok {
		return res
	}
	return e.send(ctx, req)
}

// request builds the outgoing request from the arguments; ok is false when
// the arguments cannot make one, and res then says why.
func (e *endpoint) request(ctx context.Context, args map[string]json.RawMessage) (req *http.Request, res tool.Result, ok bool) {
	var missing, dots string
	target := e.url.fill(func(name string) string {
		v, ok := args[name]
		if !ok || field.IsNull(v) {
			if missing == "" {
				missing = name
			}
			return ""
		}
		s := scalar(v)
		// PathEscape leaves . and .. as they are, and a client or server
		// that cleans the path would then reach another resource.
		if (s == "." || s == "..") && dots == "" {
			dots = name
		}
		return url.PathEscape(s)
	})
	if missing != "" {
		return nil, tool.FailureWith(tool.OutcomeInvalidArguments,
			fmt.Sprintf("%s: missing argument %q for the URL placeholder {%s}", e.name, missing, missing)), false
	}
	if dots != "" {
		return nil, tool.FailureWith(tool.OutcomeInvalidArguments,
			fmt.Sprintf("%s: argument %q for the URL placeholder {%s} must not be \".\" or \"..\"", e.name, dots, dots)), false
	}

	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic requests: same arguments, same bytes

	header := e.headers.Clone()
	if header == nil {
		header = http.Header{}
	}
	var query url.Values
	var members map[string]json.RawMessage
	var bodyValue json.RawMessage
	for _, name := range names {
		v := args[name]
		switch {
		case e.url.has(name):
			// consumed by the URL
		case e.headerArgs[name] != "":
			if !field.IsNull(v) {
				header.Set(e.headerArgs[name], scalar(v))
			}
		case e.query[name] || e.restToQuery:
			if query == nil {
				query = url.Values{}
			}
			addValues(query, name, v)
		case e.bodyArg != "":
			if name == e.bodyArg {
				bodyValue = v
			}
		case e.body != "":
			if members == nil {
				members = map[string]json.RawMessage{}
			}
			members[name] = v
		}
	}
	if len(query) > 0 {
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + query.Encode()
	}

	body, contentType, err := e.encodeBody(members, bodyValue)
	if err != nil {
		return nil, tool.FailureWith(tool.OutcomeInvalidArguments, e.name+": "+err.Error()), false
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err = http.NewRequestWithContext(ctx, e.method, target, rd)
	if err != nil {
		return nil, tool.Failure(e.name+": cannot build the request: "+err.Error(), nil), false
	}
	if body != nil && header.Get("Content-Type") == "" {
		header.Set("Content-Type", contentType)
	}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", "toolnexus")
	}
	req.Header = header
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	return req, tool.Result{}, true
}

// encodeBody returns nil when there is nothing to send: no remaining
// arguments, or no body argument, means no body at all rather than "{}".
func (e *endpoint) encodeBody(members map[string]json.RawMessage, value json.RawMessage) ([]byte, string, error) {
	switch e.body {
	case BodyJSON:
		ct := e.contentType
		if ct == "" {
			ct = "application/json"
		}
		if e.bodyArg != "" {
			if value == nil {
				return nil, "", nil
			}
			return compact(value), ct, nil
		}
		if len(members) == 0 {
			return nil, "", nil
		}
		b, err := json.Marshal(members)
		return b, ct, err
	case BodyForm:
		if e.bodyArg != "" {
			if value == nil {
				return nil, "", nil
			}
			if !isObject(value) {
				return []byte(scalar(value)), "application/x-www-form-urlencoded", nil
			}
			if err := json.Unmarshal(value, &members); err != nil {
				return nil, "", fmt.Errorf("argument %q: %v", e.bodyArg, err)
			}
		}
		if len(members) == 0 {
			return nil, "", nil
		}
		form := url.Values{}
		for k, v := range members {
			addValues(form, k, v)
		}
		return []byte(form.Encode()), "application/x-www-form-urlencoded", nil
	case BodyRaw:
		if value == nil {
			return nil, "", nil
		}
		ct := e.contentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		return []byte(scalar(value)), ct, nil
	}
	return nil, "", nil
}

func (e *endpoint) send(ctx context.Context, req *http.Request) tool.Result {
	tctx, cancel := context.WithTimeout(req.Context(), e.timeout)
	defer cancel()
	resp, err := e.client.Do(req.WithContext(tctx))
	if err != nil {
		return e.transportFailure(ctx, tctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(e.maxBytes)+1))
	if err != nil {
		return e.transportFailure(ctx, tctx, err)
	}
	meta := map[string]any{"status": resp.StatusCode}
	var rest int64
	if len(data) > e.maxBytes {
		// Counted, not kept, so the note says how much was left out.
		rest, _ = io.Copy(io.Discard, resp.Body)
	}
	text := e.text(data, rest, meta)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tool.Failure("HTTP "+strconv.Itoa(resp.StatusCode)+": "+text, meta)
	}
	switch e.resultMode {
	case ResultJSON:
		if _, cut := meta["truncated"]; !cut && json.Valid(data) {
			text = e.redact.Apply(strings.ToValidUTF8(string(compact(data)), "\uFFFD"))
		}
	case ResultStatusText:
		text = "HTTP " + strconv.Itoa(resp.StatusCode) + "\n" + text
	}
	return tool.Success(text, meta)
}

// text turns the body into output text: capped at maxBytes (on a character
// boundary, marked, and flagged in meta) and made valid UTF-8, since the
// output travels as a protobuf string.
func (e *endpoint) text(data []byte, rest int64, meta map[string]any) string {
	if len(data) <= e.maxBytes {
		return e.redact.Apply(strings.ToValidUTF8(string(data), "\uFFFD"))
	}
	cut := e.maxBytes
	for cut > 0 && !utf8.RuneStart(data[cut]) {
		cut--
	}
	meta["truncated"] = true
	return e.redact.ApplyCut(strings.ToValidUTF8(string(data[:cut]), "\uFFFD")) +
		tool.TruncationNote(int64(len(data)-cut)+rest)
}

// transportFailure tells the caller's stop from the tool's own timeout from
// a network error. Go's error text names the method and URL, never headers.
func (e *endpoint) transportFailure(ctx, tctx context.Context, err error) tool.Result {
	if ctx.Err() != nil {
		return tool.ContextResult(ctx, e.name)
	}
	if errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return tool.FailureWith(tool.OutcomeTimeout,
			fmt.Sprintf("%s: timed out after %dms", e.name, e.timeout.Milliseconds()))
	}
	return tool.Failure(e.name+": request failed: "+e.redact.Apply(err.Error()), nil)
}

func (t template) has(name string) bool {
	for _, n := range t.names {
		if n == name {
			return true
		}
	}
	return false
}

// scalar renders an argument as text for a URL, query, header or form: a
// string as is, null as "", anything else as its JSON text (numbers keep
// the model's exact digits).
func scalar(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	if string(v) == "null" {
		return ""
	}
	return string(compact(v))
}

// addValues adds an argument to query or form values: an array is the key
// repeated once per element (OpenAPI's default form/explode style), null is
// left out.
func addValues(vals url.Values, name string, v json.RawMessage) {
	v = bytes.TrimSpace(v)
	if field.IsNull(v) {
		return
	}
	if v[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) == nil {
			for _, it := range items {
				vals.Add(name, scalar(it))
			}
			return
		}
	}
	vals.Add(name, scalar(v))
}

func compact(v []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return v
	}
	return buf.Bytes()
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
