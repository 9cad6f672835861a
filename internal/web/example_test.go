package web_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/toolnexus/toolnexus/internal/web"
)

// Mounting a page on the web listener is one call.
func Example() {
	w := web.New(web.Options{Addr: "127.0.0.1:0", PublicURL: "https://tools.example.com"})
	w.HandleFunc("GET /connections", func(rw http.ResponseWriter, r *http.Request) {
		web.Page(rw, http.StatusOK, true, "Your connections", "github: connected")
	})
	if err := w.Listen(); err != nil {
		panic(err)
	}
	w.Serve(make(chan error, 1))
	defer w.Shutdown(context.Background())
	fmt.Println(w.URL("/connections"))
	// Output: https://tools.example.com/connections
}
