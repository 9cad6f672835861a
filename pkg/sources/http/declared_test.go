package http_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestPlaceholdersArePathEscapedAndConsumed(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"get_file","url":`+q(a.URL+"/repos/{owner}/{repo}/files/{path}")+`}]`, ""))
	got := echoed(t, call(t, reg, "get_file", `{"owner":"a b","repo":"x/y","path":42}`))
	if want := "/repos/a%20b/x%2Fy/files/42"; got.Path != want {
		t.Errorf("path = %q, want %q", got.Path, want)
	}
	if got.Query != "" {
		t.Errorf("placeholder arguments leaked into the query: %q", got.Query)
	}
}

func TestMissingPlaceholderIsInvalidArguments(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"get_post","url":`+q(a.URL+"/posts/{id}")+`}]`, ""))
	res := call(t, reg, "get_post", `{"other":1}`)
	if !res.IsError || res.Outcome != tool.OutcomeInvalidArguments {
		t.Fatalf("result = %+v, want an invalid-arguments failure", res)
	}
	if want := `get_post: missing argument "id" for the URL placeholder {id}`; res.Output != want {
		t.Errorf("output = %q, want %q", res.Output, want)
	}
	res = call(t, reg, "get_post", `[1]`)
	if res.Outcome != tool.OutcomeInvalidArguments || res.Output != "get_post: invalid arguments: expected a JSON object" {
		t.Errorf("array arguments: %+v", res)
	}
}

func TestGETSendsRemainingArgumentsAsQuery(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"search","url":`+q(a.URL+"/search/{kind}?fixed=1")+`}]`, ""))
	got := echoed(t, call(t, reg, "search", `{"kind":"posts","q":"a&b c","page":2,"exact":true,"tags":["x","y"],"skip":null,"price":1.50}`))
	if got.Method != "GET" || got.Path != "/search/posts" {
		t.Errorf("request = %s %s", got.Method, got.Path)
	}
	if want := "fixed=1&exact=true&page=2&price=1.50&q=a%26b+c&tags=x&tags=y"; got.Query != want {
		t.Errorf("query = %q, want %q", got.Query, want)
	}
	if got.Body != "" || got.ContentType != "" {
		t.Errorf("GET sent a body %q (%q)", got.Body, got.ContentType)
	}
}

func TestJSONBodyTakesWhatIsNotPlaceholderOrQuery(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"create","method":"post","url":`+q(a.URL+"/posts/{id}")+`,"query":["dry"]}]`, ""))
	got := echoed(t, call(t, reg, "create", `{"id":7,"dry":true,"title":"Hi","n":1.50,"meta":{"k":[1,2]}}`))
	if got.Method != "POST" || got.Path != "/posts/7" || got.Query != "dry=true" {
		t.Errorf("request = %s %s ? %s", got.Method, got.Path, got.Query)
	}
	if want := `{"meta":{"k":[1,2]},"n":1.50,"title":"Hi"}`; got.Body != want {
		t.Errorf("body = %s, want %s (numbers exactly as the model wrote them)", got.Body, want)
	}
	if got.ContentType != "application/json" {
		t.Errorf("content type = %q", got.ContentType)
	}

	// Nothing left for the body: no body at all, not "{}".
	got = echoed(t, call(t, reg, "create", `{"id":8}`))
	if got.Body != "" || got.ContentType != "" {
		t.Errorf("empty body sent as %q (%q)", got.Body, got.ContentType)
	}
}

func TestFormBody(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"login","method":"PUT","url":`+q(a.URL+"/session")+`,"body":"form"}]`, ""))
	got := echoed(t, call(t, reg, "login", `{"user":"a b","roles":["r1","r2"],"n":3}`))
	if want := "n=3&roles=r1&roles=r2&user=a+b"; got.Body != want {
		t.Errorf("body = %q, want %q", got.Body, want)
	}
	if got.ContentType != "application/x-www-form-urlencoded" || got.Query != "" {
		t.Errorf("content type %q, query %q", got.ContentType, got.Query)
	}
}

func TestRawBody(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[
		{"name":"note","method":"POST","url":`+q(a.URL+"/notes/{id}")+`,"body":"raw"},
		{"name":"csv","method":"POST","url":`+q(a.URL+"/csv")+`,"body":"raw","headers":{"Content-Type":"text/csv"}}]`, ""))
	got := echoed(t, call(t, reg, "note", `{"id":"n1","body":"line one\n<b>raw</b> {not json","ignored":1}`))
	if got.Body != "line one\n<b>raw</b> {not json" {
		t.Errorf("body = %q, want the body argument verbatim", got.Body)
	}
	if got.ContentType != "text/plain; charset=utf-8" || got.Query != "" {
		t.Errorf("content type %q, query %q", got.ContentType, got.Query)
	}
	got = echoed(t, call(t, reg, "note", `{"id":"n2","body":{"a": 1}}`))
	if got.Body != `{"a":1}` {
		t.Errorf("non-string body = %q, want its JSON text", got.Body)
	}
	got = echoed(t, call(t, reg, "csv", `{"body":"a,b\n1,2"}`))
	if got.Body != "a,b\n1,2" || got.ContentType != "text/csv" {
		t.Errorf("configured content type: body %q, type %q", got.Body, got.ContentType)
	}
}

func TestResultModes(t *testing.T) {
	a := newAPI(t)
	u := q(a.URL + "/json")
	reg := mustStart(t, parse(t, `[
		{"name":"as_text","url":`+u+`},
		{"name":"as_json","url":`+u+`,"resultMode":"json"},
		{"name":"as_status","url":`+u+`,"resultMode":"status+text"},
		{"name":"json_of_text","url":`+q(a.URL+"/text/plain")+`,"resultMode":"json"},
		{"name":"latin1_json","url":`+q(a.URL+"/latin1")+`,"resultMode":"json"},
		{"name":"latin1_text","url":`+q(a.URL+"/latin1")+`}]`, ""))
	raw := "{ \"a\" : [1, 2],\n  \"b\": \"x\" }"
	for name, want := range map[string]string{
		"as_text":      raw,
		"as_json":      `{"a":[1,2],"b":"x"}`,
		"as_status":    "HTTP 200\n" + raw,
		"json_of_text": "plain",
		"latin1_json":  "{\"name\":\"caf\uFFFD\"}",
		"latin1_text":  "{\"name\": \"caf\uFFFD\"}",
	} {
		res := call(t, reg, name, `{}`)
		if res.IsError || res.Output != want {
			t.Errorf("%s: output %q (error %v), want %q", name, res.Output, res.IsError, want)
		}
		if !reflect.DeepEqual(res.Metadata, map[string]any{"status": 200}) {
			t.Errorf("%s: metadata %v, want status 200", name, res.Metadata)
		}
	}
}

func TestNon2xxIsFailureWithStatus(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"status","url":`+q(a.URL+"/status/{code}")+`,"resultMode":"status+text"}]`, ""))
	for _, code := range []int{404, 500, 302} {
		res := call(t, reg, "status", `{"code":`+jsonInt(code)+`}`)
		want := "HTTP " + jsonInt(code) + ": nope"
		if code == 302 { // a redirect without Location is the final answer
			want = "HTTP 302: nope"
		}
		if !res.IsError || res.Output != want || res.Resolved() != tool.OutcomeToolError {
			t.Errorf("%d: %+v, want failure %q", code, res, want)
		}
		if !reflect.DeepEqual(res.Metadata, map[string]any{"status": code}) {
			t.Errorf("%d: metadata %v", code, res.Metadata)
		}
	}
	res := call(t, reg, "status", `{"code":201}`)
	if res.IsError || res.Output != "HTTP 201\nnope" || res.Metadata["status"] != 201 {
		t.Errorf("201: %+v", res)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestToolTimeoutAndCallerCancel(t *testing.T) {
	a := newAPI(t)
	reg := mustStart(t, parse(t, `[{"name":"slow","url":`+q(a.URL+"/slow")+`,"timeout":50}]`, ""))
	res := call(t, reg, "slow", `{}`)
	if res.Outcome != tool.OutcomeTimeout || res.Output != "slow: timed out after 50ms" {
		t.Errorf("timeout: %+v", res)
	}
	<-a.arrived

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result)
	reg = mustStart(t, parse(t, `[{"name":"slow","url":`+q(a.URL+"/slow")+`}]`, ""))
	go func() {
		done <- testutil.Direct{Reg: reg}.Execute(ctx, "slow", tool.Call{Arguments: json.RawMessage(`{}`)})
	}()
	<-a.arrived // the request is in flight: now the caller gives up
	cancel()
	res = <-done
	if res.Outcome != tool.OutcomeCanceled || res.Output != "slow: canceled" {
		t.Errorf("caller cancel: %+v", res)
	}
}

func TestResponseIsCappedOnACharacterBoundary(t *testing.T) {
	a := newAPI(t)
	cfg := parse(t, `[{"name":"big","url":`+q(a.URL+"/text/{body}")+`}]`, "")
	reg, _, err := start(t, cfg, envWithCap(4))
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, reg, "big", `{"body":"aéé"}`) // 5 bytes; the cap falls inside the second é
	if want := "aé\n[output truncated: 2 bytes omitted]"; res.Output != want {
		t.Errorf("output = %q, want %q", res.Output, want)
	}
	if res.Metadata["truncated"] != true || res.Metadata["status"] != 200 {
		t.Errorf("metadata = %v", res.Metadata)
	}
	if res := call(t, reg, "big", `{"body":"abcd"}`); res.Output != "abcd" || res.Metadata["truncated"] != nil {
		t.Errorf("exactly at the cap: %+v", res)
	}
}

func TestDerivedAndDeclaredSchemas(t *testing.T) {
	reg := mustStart(t, parse(t, `[
		{"name":"derived","method":"POST","url":"https://api.example.test/u/{user}/p/{post}","query":["page","user"]},
		{"name":"raw","method":"POST","url":"https://api.example.test/raw","body":"raw"},
		{"name":"declared","url":"https://api.example.test/x","description":"Get X","inputSchema":{"type":"object","properties":{"a":{"type":"integer"}}}}]`, ""))
	snap := reg.Snapshot()
	want := map[string]string{
		"derived":  `{"properties":{"page":{"description":"Query parameter.","type":"string"},"post":{"description":"Fills {post} in the URL.","type":"string"},"user":{"description":"Fills {user} in the URL.","type":"string"}},"required":["user","post"],"type":"object"}`,
		"raw":      `{"properties":{"body":{"description":"The request body, sent as is.","type":"string"}},"type":"object"}`,
		"declared": `{"type":"object","properties":{"a":{"type":"integer"}}}`,
	}
	for name, schema := range want {
		e, ok := snap.Lookup(name)
		if !ok {
			t.Fatalf("tool %s missing", name)
		}
		if string(e.Tool.InputSchema) != schema {
			t.Errorf("%s schema = %s\nwant %s", name, e.Tool.InputSchema, schema)
		}
		if e.Tool.Source != "http" {
			t.Errorf("%s source = %q", name, e.Tool.Source)
		}
	}
	if e, _ := snap.Lookup("declared"); e.Tool.Description != "Get X" {
		t.Errorf("description = %q", e.Tool.Description)
	}
}

func TestNetworkErrorIsAFailure(t *testing.T) {
	a := newAPI(t)
	u := a.URL
	a.Close() // nothing listens there any more
	reg := mustStart(t, parse(t, `[{"name":"gone","url":`+q(u+"/x")+`}]`, ""))
	res := call(t, reg, "gone", `{}`)
	if !res.IsError || res.Resolved() != tool.OutcomeToolError || !strings.HasPrefix(res.Output, "gone: request failed: ") {
		t.Errorf("result = %+v", res)
	}
}
