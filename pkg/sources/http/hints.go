package http

import (
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// methodHints are a tool's annotations from its HTTP method, as RFC 9110
// defines the methods: GET, HEAD and OPTIONS are safe (read-only) and
// idempotent; PUT and DELETE are idempotent and overwrite or remove; POST
// and PATCH are neither, and whether they destroy anything the method does
// not say. Every endpoint is a remote service: the open world.
func methodHints(method string) *tool.Annotations {
	t, f := true, false
	a := &tool.Annotations{OpenWorld: &t}
	switch strings.ToUpper(method) {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		a.ReadOnly, a.Destructive, a.Idempotent = &t, &f, &t
	case http.MethodPut, http.MethodDelete:
		a.ReadOnly, a.Destructive, a.Idempotent = &f, &t, &t
	default:
		a.ReadOnly, a.Idempotent = &f, &f
	}
	return a
}
