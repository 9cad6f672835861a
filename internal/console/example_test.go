package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/web"
)

// The console over a core, mounted on the web listener: without a login
// every page sends the browser to the login form.
func Example() {
	cfg, err := config.Parse([]byte(`{"builtins": false, "sandbox": {"mode": "off"},
		"auth": {"tokens": [{"name": "ops", "token": "ops-token-0123456789", "admin": true}]}}`), "", ".")
	if err != nil {
		panic(err)
	}
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer c.Close(context.Background())
	sessions, err := vault.New(vault.NewMemory(), vault.RandomKeys())
	if err != nil {
		panic(err)
	}
	w := web.New(web.Options{Addr: "127.0.0.1:0", PublicURL: "http://127.0.0.1:8080"})
	console.New(console.Options{Core: c, Store: sessions, BaseURL: w.BaseURL}).Mount(w)

	rec := httptest.NewRecorder()
	w.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/approvals", nil))
	fmt.Println(rec.Code, rec.Header().Get("Location"))
	// Output: 303 /login?next=%2Fapprovals
}
