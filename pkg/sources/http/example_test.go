package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A declared GET tool: the {id} placeholder is filled from the arguments
// and the rest go to the query string.
func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path": %q, "query": %q}`, r.URL.Path, r.URL.RawQuery)
	}))
	defer api.Close()

	cfg, _, err := httpsrc.ParseConfig(json.RawMessage(`[{
		"name": "get_post",
		"url": "`+api.URL+`/posts/{id}",
		"resultMode": "json"
	}]`), nil)
	if err != nil {
		panic(err)
	}
	reg := registry.New()
	src := httpsrc.New(cfg, sources.Env{})
	defer src.Close(context.Background())
	if err := src.Start(context.Background(), reg); err != nil {
		panic(err)
	}

	e, _ := reg.Snapshot().Lookup("get_post")
	res := e.Tool.Execute(context.Background(),
		tool.Call{Arguments: json.RawMessage(`{"id": 42, "fields": "title"}`)})
	fmt.Println(res.Output)
	fmt.Println(res.Metadata)
	// Output:
	// {"path":"/posts/42","query":"fields=title"}
	// map[status:200]
}
