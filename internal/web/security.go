package web

import (
	"html/template"
	"net/http"
)

// DefaultCSP allows the page its own inline styles and nothing else: no
// script, no fetch, no frame, no form posting elsewhere.
const DefaultCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the security headers on every response before the handler
// runs; a handler may replace one (its own Content-Security-Policy).
func secure(next http.Handler, https bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", DefaultCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		// A callback URL carries an authorization code and a state: no
		// page may pass it on in a Referer, nor any cache keep it.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if https {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// page is the one layout of the listener's own pages: a title and a
// message, escaped.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>toolnexus: {{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}
h1{font-size:1.4em}.bad{color:#a00}.good{color:#060}</style></head>
<body><h1 class="{{.Class}}">{{.Title}}</h1>{{range .Lines}}<p>{{.}}</p>{{end}}</body></html>
`))

// Page writes a small HTML page: status, a title and paragraphs of text
// (escaped). ok colours the title as a success or a failure.
func Page(w http.ResponseWriter, status int, ok bool, title string, lines ...string) {
	class := "bad"
	if ok {
		class = "good"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = page.Execute(w, struct {
		Title, Class string
		Lines        []string
	}{title, class, lines})
}
