package http_test

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// petstore loads the same small petstore written two ways: OpenAPI 3.0 as a
// YAML file next to the config, and OpenAPI 3.1 as JSON fetched over HTTP
// (with a header the spec server checks, and a relative servers entry).
func petstores(t *testing.T, a *api) map[string]*registry.Registry {
	t.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_HTTP_SPEC_KEY", "spec-key")
	out := map[string]*registry.Registry{}
	for name, o := range map[string]string{
		"3.0 yaml file": `[{"spec":"petstore-3.0.yaml","baseUrl":` + q(a.URL+"/v1/") + `}]`,
		"3.1 json url":  `[{"spec":` + q(a.URL+"/spec/petstore-3.1.json") + `,"headers":{"X-Api-Key":"${TN_HTTP_SPEC_KEY}"}}]`,
	} {
		reg, src, err := start(t, parse(t, "", o), sources.Env{BaseDir: testdata})
		if err != nil || src.Status().State != sources.Connected {
			t.Fatalf("%s: Start %v, status %+v", name, err, src.Status())
		}
		out[name] = reg
	}
	return out
}

func TestOpenAPIToolsAndSchemas(t *testing.T) {
	a := newAPI(t)
	for version, reg := range petstores(t, a) {
		t.Run(version, func(t *testing.T) {
			snap := reg.Snapshot()
			var names []string
			schemas := map[string]map[string]any{}
			for _, e := range snap.Entries() {
				names = append(names, e.Tool.Name)
				if e.Tool.Source != "http" {
					t.Errorf("%s: source %q", e.Tool.Name, e.Tool.Source)
				}
				if strings.Contains(string(e.Tool.InputSchema), "$ref") {
					t.Errorf("%s: schema still points into the spec: %s", e.Tool.Name, e.Tool.InputSchema)
				}
				var s map[string]any
				if err := json.Unmarshal(e.Tool.InputSchema, &s); err != nil {
					t.Fatal(err)
				}
				schemas[e.Tool.Name] = s
			}
			if want := []string{"createPet", "createPets", "deletePet", "listPets", "showPetById", "updatePet"}; !reflect.DeepEqual(names, want) {
				t.Fatalf("tools = %v, want %v", names, want)
			}
			e, _ := snap.Lookup("showPetById")
			if want := "Info for a specific pet\n\nReturns one pet with its friends."; e.Tool.Description != want {
				t.Errorf("description = %q", e.Tool.Description)
			}

			checkJSON(t, "listPets", schemas["listPets"]["properties"], `{
				"limit":{"description":"How many items to return at one time (max 100)","type":"integer"%s},
				"tags":{"description":"Tags to filter by","items":{"type":"string"},"type":"array"}}`,
				map[bool]string{true: `,"format":"int32"`, false: `,"maximum":100`}[version == "3.0 yaml file"])
			if schemas["listPets"]["required"] != nil {
				t.Errorf("listPets: nothing is required, got %v", schemas["listPets"]["required"])
			}
			// A plain object body is merged into the arguments; a nullable
			// 3.0 field is written the 3.1 way.
			checkJSON(t, "createPet", schemas["createPet"], `{"type":"object","required":["name"],"properties":{
				"name":{"description":"The pet's name","type":"string"},"tag":{"type":["string","null"]}}}`)
			// An array body cannot merge: it is the `body` argument.
			checkJSON(t, "createPets", schemas["createPets"], `{"type":"object","required":["body"],"properties":{
				"body":{"description":"The pets to create","type":"array","items":{"type":"object","required":["name"],
				"properties":{"name":{"description":"The pet's name","type":"string"},"tag":{"type":["string","null"]}}}}}}`)
			checkJSON(t, "deletePet", schemas["deletePet"], `{"type":"object","required":["X-Request-Id","petId"],"properties":{
				"X-Request-Id":{"type":"string"},"petId":{"description":"The id of the pet","type":"string"}}}`)
			// The recursive Pet is inlined once and cut at the repeat.
			friends := schemas["updatePet"]["properties"].(map[string]any)["friends"]
			checkJSON(t, "updatePet.friends", friends, `{"type":"array","items":{}}`)
			if r := schemas["updatePet"]["required"]; !reflect.DeepEqual(r, []any{"petId"}) {
				t.Errorf("updatePet required = %v (the body is optional, so its required fields are not)", r)
			}
		})
	}
}

func checkJSON(t *testing.T, what string, got any, want string, args ...any) {
	t.Helper()
	if len(args) > 0 {
		want = strings.ReplaceAll(want, "%s", args[0].(string))
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		ws, _ := json.Marshal(w)
		t.Errorf("%s =\n%s\nwant\n%s", what, g, ws)
	}
}

func TestOpenAPIOperationsRunEndToEnd(t *testing.T) {
	a := newAPI(t)
	for version, reg := range petstores(t, a) {
		t.Run(version, func(t *testing.T) {
			got := echoed(t, call(t, reg, "listPets", `{"limit":2,"tags":["a","b c"]}`))
			if got.Method != "GET" || got.Path != "/v1/pets" || got.Query != "limit=2&tags=a&tags=b+c" {
				t.Errorf("listPets sent %s %s ? %s", got.Method, got.Path, got.Query)
			}
			got = echoed(t, call(t, reg, "showPetById", `{"petId":"a/b c"}`))
			if got.Method != "GET" || got.Path != "/v1/pets/a%2Fb%20c" || got.Query != "" {
				t.Errorf("showPetById sent %s %s ? %s", got.Method, got.Path, got.Query)
			}
			got = echoed(t, call(t, reg, "createPet", `{"name":"Rex","tag":null}`))
			if got.Method != "POST" || got.Path != "/v1/pets" || got.Body != `{"name":"Rex","tag":null}` || got.ContentType != "application/json" {
				t.Errorf("createPet sent %s %s %q (%s)", got.Method, got.Path, got.Body, got.ContentType)
			}
			got = echoed(t, call(t, reg, "createPets", `{"body":[{"name":"A"},{"name":"B"}]}`))
			if got.Path != "/v1/pets/batch" || got.Body != `[{"name":"A"},{"name":"B"}]` {
				t.Errorf("createPets sent %s %q", got.Path, got.Body)
			}
			got = echoed(t, call(t, reg, "updatePet", `{"petId":"7","id":7,"name":"Rex"}`))
			if got.Method != "PUT" || got.Path != "/v1/pets/7" || got.Body != `{"id":7,"name":"Rex"}` {
				t.Errorf("updatePet sent %s %s %q", got.Method, got.Path, got.Body)
			}
			got = echoed(t, call(t, reg, "deletePet", `{"petId":"7","X-Request-Id":"req-1"}`))
			if got.Method != "DELETE" || got.Path != "/v1/pets/7" || got.RequestID != "req-1" || got.Body != "" {
				t.Errorf("deletePet sent %s %s id=%q body=%q", got.Method, got.Path, got.RequestID, got.Body)
			}
		})
	}
}

func TestOpenAPIPrefixAndOperationsFilter(t *testing.T) {
	a := newAPI(t)
	var logs syncBuffer
	env := sources.Env{BaseDir: "testdata", Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	reg, _, err := start(t, parse(t, "", `[
		{"spec":"petstore-3.0.yaml","baseUrl":`+q(a.URL)+`,"prefix":"store.","operations":{"listPets":true,"showPetById":true,"adoptPet":true}},
		{"spec":"petstore-3.0.yaml","baseUrl":`+q(a.URL)+`,"operations":{"deletePet":false,"createPets":false,"updatePet":false}}]`), env)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range reg.Snapshot().Entries() {
		names = append(names, e.Tool.Name)
	}
	if want := []string{"createPet", "listPets", "showPetById", "store_listPets", "store_showPetById"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	contains(t, "logs", logs.String(), `openapi[0].operations: tools filter names unknown tool \"adoptPet\"`)
	if got := echoed(t, call(t, reg, "store_listPets", `{"limit":1}`)); got.Path != "/pets" || got.Query != "limit=1" {
		t.Errorf("store_listPets sent %s ? %s", got.Path, got.Query)
	}
}

func TestOpenAPIFailuresAreIsolated(t *testing.T) {
	a := newAPI(t)
	testdata, _ := filepath.Abs("testdata")
	declared := `[{"name":"ping","url":` + q(a.URL+"/ping") + `}]`

	for _, tc := range []struct{ name, openapi, want string }{
		{"missing file", `[{"spec":"missing.yaml"}]`, "openapi[0] (missing.yaml): cannot load the spec: "},
		{"no servers, no baseUrl", `[{"spec":"petstore-3.1.json"}]`, `openapi[0] (petstore-3.1.json): the spec's server URL "/v1" is relative and the spec is a local file; set baseUrl`},
		{"spec behind auth", `[{"spec":` + q(a.URL+"/spec/petstore-3.1.json") + `}]`, "HTTP 401"},
		{"not a spec", `[{"spec":` + q(a.URL+"/status/404") + `}]`, "HTTP 404"},
		{"ref outside the spec dir", `[{"spec":"escape-ref.yaml"}]`, "refusing to read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, src, err := start(t, parse(t, declared, tc.openapi), sources.Env{BaseDir: testdata})
			if err != nil {
				t.Fatalf("Start = %v; declared tools loaded, so Start must succeed", err)
			}
			st := src.Status()
			if st.State != sources.Failed {
				t.Errorf("state %s, want failed", st.State)
			}
			contains(t, "status error", st.Error, tc.want)
			if got := echoed(t, call(t, reg, "ping", `{}`)); got.Path != "/ping" {
				t.Errorf("declared tool sent %s", got.Path)
			}

			// Alone, the broken spec fails Start itself.
			_, src, err = start(t, parse(t, "", tc.openapi), sources.Env{BaseDir: testdata})
			if err == nil || src.Status().State != sources.Failed {
				t.Errorf("spec alone: Start %v, status %+v", err, src.Status())
			}
		})
	}
}

func TestDeclaredToolWinsANameClash(t *testing.T) {
	a := newAPI(t)
	reg, src, err := start(t, parse(t, `[{"name":"listPets","url":`+q(a.URL+"/mine")+`}]`,
		`[{"spec":"petstore-3.0.yaml","baseUrl":`+q(a.URL)+`}]`), sources.Env{BaseDir: "testdata"})
	if err != nil || src.Status().State != sources.Connected {
		t.Fatalf("Start %v, status %+v", err, src.Status())
	}
	if got := echoed(t, call(t, reg, "listPets", `{}`)); got.Path != "/mine" {
		t.Errorf("listPets went to %s, want the declared tool", got.Path)
	}
	if reg.Snapshot().Len() != 6 {
		t.Errorf("tools = %d, want 6", reg.Snapshot().Len())
	}
}

func TestOpenAPIOtherShapes(t *testing.T) {
	a := newAPI(t)
	t.Setenv("TN_HTTP_SPEC_KEY", "spec-key")
	reg, src, err := start(t, parse(t, "", `[{"spec":`+q(a.URL+"/spec/misc-3.1.yaml")+`,"headers":{"X-Api-Key":"${TN_HTTP_SPEC_KEY}"}}]`), sources.Env{})
	if err != nil || src.Status().State != sources.Connected {
		t.Fatalf("Start %v, status %+v", err, src.Status())
	}
	snap := reg.Snapshot()
	schema := func(name string) map[string]any {
		e, ok := snap.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		var s map[string]any
		json.Unmarshal(e.Tool.InputSchema, &s)
		return s
	}

	// No operationId: named from method and path; a text body is raw.
	checkJSON(t, "post_notes_name", schema("post_notes_name"), `{"type":"object","required":["body","name"],"properties":{
		"body":{"type":"string","description":"The request body (text/plain), sent as is."},"name":{"type":"string"}}}`)
	got := echoed(t, call(t, reg, "post_notes_name", `{"name":"todo","body":"buy milk"}`))
	if got.Path != "/v2/notes/todo" || got.Body != "buy milk" || got.ContentType != "text/plain" {
		t.Errorf("note sent %s %q (%s)", got.Path, got.Body, got.ContentType)
	}

	// A form body from another file on the same host, merged; cookies are not sent.
	if e, _ := snap.Lookup("login"); e.Tool.Description != "Start a session." {
		t.Errorf("login description %q", e.Tool.Description)
	}
	checkJSON(t, "login", schema("login"), `{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string","writeOnly":true}}}`)
	got = echoed(t, call(t, reg, "login", `{"user":"ann","password":"p w"}`))
	if got.Body != "password=p+w&user=ann" || got.ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("login sent %q (%s)", got.Body, got.ContentType)
	}

	// The operation's id parameter overrides the path's; a composed body is
	// nested, under requestBody because a parameter is called body.
	s := schema("patchItem")
	checkJSON(t, "patchItem.id", s["properties"].(map[string]any)["id"], `{"type":"string","description":"The item"}`)
	checkJSON(t, "patchItem.filter", s["properties"].(map[string]any)["filter"], `{"type":"object","properties":{"k":{"type":"string"}}}`)
	if _, ok := s["properties"].(map[string]any)["requestBody"].(map[string]any)["allOf"]; !ok {
		t.Errorf("patchItem.requestBody = %v, want the allOf schema", s["properties"].(map[string]any)["requestBody"])
	}
	got = echoed(t, call(t, reg, "patchItem", `{"id":"i1","body":"q","filter":{"k":"v"},"requestBody":{"user":"ann","extra":true}}`))
	if got.Method != "PATCH" || got.Path != "/v2/items/i1" || got.Query != "body=q&filter=%7B%22k%22%3A%22v%22%7D" ||
		got.Body != `{"user":"ann","extra":true}` || got.ContentType != "application/merge-patch+json" {
		t.Errorf("patchItem sent %s %s ? %s %q (%s)", got.Method, got.Path, got.Query, got.Body, got.ContentType)
	}
}

func TestOpenAPIRemoteRefToAnotherHostIsRefused(t *testing.T) {
	a := newAPI(t)
	t.Setenv("TN_HTTP_SPEC_KEY", "spec-key")
	_, src, err := start(t, parse(t, "", `[{"spec":`+q(a.URL+"/spec/other-host.yaml")+`,"headers":{"X-Api-Key":"${TN_HTTP_SPEC_KEY}"}}]`), sources.Env{})
	if err == nil {
		t.Fatal("Start succeeded")
	}
	contains(t, "status error", src.Status().Error, "refusing to read http://192.0.2.1/x.yaml: a remote spec may only reference documents on its own host")
}

func TestOpenAPISpecFetchTimesOut(t *testing.T) {
	a := newAPI(t)
	_, src, err := start(t, parse(t, "", `[{"spec":`+q(a.URL+"/slow")+`,"timeout":30}]`), sources.Env{})
	<-a.arrived
	if err == nil || src.Status().Error != "openapi[0] ("+a.URL+"/slow): loading the spec timed out after 30ms; raise timeout or check the address" {
		t.Errorf("Start %v, status %+v", err, src.Status())
	}
}
