package http_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
)

func TestParseConfigDefaults(t *testing.T) {
	cfg := parse(t, `[{"name":"get_post","url":"https://api.example.test/posts/{id}"}]`,
		`[{"spec":"./petstore.yaml","operations":{"deletePet":false}}]`)
	want := httpsrc.Config{
		Tools: []httpsrc.ToolConfig{{Name: "get_post", Method: "GET", URL: "https://api.example.test/posts/{id}",
			Body: "json", Timeout: 30000, ResultMode: "text"}},
		OpenAPI: []httpsrc.OpenAPIConfig{{Spec: "./petstore.yaml", Operations: sources.Filter{"deletePet": false}, Timeout: 30000}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config = %+v\nwant %+v", cfg, want)
	}
	empty, warns, err := httpsrc.ParseConfig(nil, json.RawMessage("null"))
	if err != nil || warns != nil || !reflect.DeepEqual(empty, httpsrc.Config{}) {
		t.Errorf("empty sections: %+v %v %v", empty, warns, err)
	}
}

func TestConfigMarshalsDeterministically(t *testing.T) {
	h := `[{"name":"a","method":"post","url":"https://x.test/{id}","headers":{"Z":"z","Authorization":"Bearer ${TOKEN}","M":"m"},
		"query":["q"],"body":"form","inputSchema":{ "type" : "object" },"timeout":5,"resultMode":"json"}]`
	o := `[{"spec":"https://x.test/openapi.json","baseUrl":"https://x.test/v2","headers":{"K":"${KEY}"},"prefix":"x_","operations":{"b":true,"a":true},"timeout":10}]`
	first, _ := json.Marshal(parse(t, h, o))
	for range 20 {
		again, _ := json.Marshal(parse(t, h, o))
		if string(again) != string(first) {
			t.Fatalf("marshal differs:\n%s\n%s", first, again)
		}
	}
	want := `{"tools":[{"name":"a","method":"POST","url":"https://x.test/{id}","headers":{"Authorization":"Bearer ${TOKEN}","M":"m","Z":"z"},"query":["q"],"body":"form","inputSchema":{"type":"object"},"timeout":5,"resultMode":"json"}],` +
		`"openapi":[{"spec":"https://x.test/openapi.json","baseUrl":"https://x.test/v2","headers":{"K":"${KEY}"},"prefix":"x_","operations":{"a":true,"b":true},"timeout":10}]}`
	if string(first) != want {
		t.Errorf("marshal =\n%s\nwant\n%s", first, want)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ http, openapi, want string }{
		{`{"name":"x"}`, ``, `must be a list of tool declarations, e.g. [{"name": "get_post", "url": "https://api.example.test/posts/{id}"}]`},
		{`["x"]`, ``, `[0]: must be an object`},
		{`[{"url":"https://x.test"}]`, ``, `[0].name: is required`},
		{`[{"name":"a b","url":"https://x.test"}]`, ``, `[0].name: "a b" may only contain letters, digits, _ and - (at most 128 characters)`},
		{`[{"name":"a","url":"https://x.test"},{"name":"a","url":"https://x.test"}]`, ``, `[1].name: "a" is already declared at [0]; tool names must be unique`},
		{`[{"name":"a","url":"https://x.test"},{"name":"b","url":"https://x.test","method":"FETCH"}]`, ``, `[1].method: must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS (got "FETCH")`},
		{`[{"name":"a","method":7,"url":"https://x.test"}]`, ``, `[0].method: must be a string`},
		{`[{"name":"a"}]`, ``, `[0].url: is required`},
		{`[{"name":"a","url":"/posts/{id}"}]`, ``, `[0].url: must be an absolute http or https URL, e.g. "https://api.example.test/posts/{id}" (got "/posts/{id}")`},
		{`[{"name":"a","url":"https://x.test/{id"}]`, ``, `[0].url: unclosed { in "https://x.test/{id"; placeholders look like {id}`},
		{`[{"name":"a","url":"https://x.test/{}"}]`, ``, `[0].url: bad placeholder {} in "https://x.test/{}"; placeholders look like {id}`},
		{`[{"name":"a","url":"https://x.test","heders":{}}]`, ``, `[0].heders: unknown key; did you mean "headers"?`},
		{`[{"name":"a","url":"https://x.test","zzz":1}]`, ``, `[0].zzz: unknown key; valid keys are name, description, method, url, headers, query, body, inputSchema, timeout, resultMode, tokenExchange`},
		{`[{"name":"a","url":"https://x.test","headers":{"A":1}}]`, ``, `[0].headers: must be an object of header names to string values, e.g. {"Authorization": "Bearer ${TOKEN}"}`},
		{`[{"name":"a","url":"https://x.test","query":"page"}]`, ``, `[0].query: must be a list of argument names, e.g. ["page", "limit"]`},
		{`[{"name":"a","url":"https://x.test","body":"xml"}]`, ``, `[0].body: must be one of json, form, raw (got "xml")`},
		{`[{"name":"a","url":"https://x.test","inputSchema":"object"}]`, ``, `[0].inputSchema: must be a JSON Schema object, e.g. {"type": "object", "properties": {...}}`},
		{`[{"name":"a","url":"https://x.test","timeout":-1}]`, ``, `[0].timeout: must be a positive whole number of milliseconds, e.g. 30000`},
		{`[{"name":"a","url":"https://x.test","timeout":"5s"}]`, ``, `[0].timeout: must be a positive whole number of milliseconds, e.g. 30000`},
		{`[{"name":"a","url":"https://x.test","resultMode":"xml"}]`, ``, `[0].resultMode: must be one of text, json, status+text (got "xml")`},
		{``, `{"spec":"x"}`, `openapi: must be a list of specs, e.g. [{"spec": "./petstore.yaml"}]`},
		{``, `[{"baseUrl":"https://x.test"}]`, `openapi[0].spec: is required`},
		{``, `[{"spec":"a.yaml","baseUrl":"x.test"}]`, `openapi[0].baseUrl: must be an absolute http or https URL, e.g. "https://api.example.test/v1" (got "x.test")`},
		{``, `[{"spec":"a.yaml","operations":["listPets"]}]`, `openapi[0].operations: must be an object of operationId to true/false, e.g. {"deletePet": false}`},
		{``, `[{"spec":"a.yaml","prefx":"p"}]`, `openapi[0].prefx: unknown key; did you mean "prefix"?`},
	} {
		var h, o json.RawMessage
		if tc.http != "" {
			h = json.RawMessage(tc.http)
		}
		if tc.openapi != "" {
			o = json.RawMessage(tc.openapi)
		}
		_, _, err := httpsrc.ParseConfig(h, o)
		if err == nil || err.Error() != tc.want {
			t.Errorf("http %s openapi %s:\n got %v\nwant %s", tc.http, tc.openapi, err, tc.want)
		}
	}
}
