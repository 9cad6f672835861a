package sources

import (
	"fmt"
	"net/http"
)

// maxRedirects is how many redirects one request follows (Go's default).
const maxRedirects = 10

// keptAcrossHosts are the request headers that still go out after a
// redirect to another host: they describe the request, not the caller.
var keptAcrossHosts = map[string]bool{
	"User-Agent": true, "Accept": true, "Accept-Encoding": true, "Accept-Language": true,
	"Content-Type": true, "A2A-Version": true, "A2a-Version": true,
}

// CheckRedirect is the redirect policy of every HTTP client a source uses
// with configured headers. Go's client already drops Authorization and
// Cookie on a redirect to another domain, but copies every other header —
// an X-Api-Key from the config would follow the redirect to whatever host
// the upstream names. Here a redirect to another host (or port) carries
// only the headers that describe the request; coming back to the first
// host restores them.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Host != via[0].URL.Host {
		for k := range req.Header {
			if !keptAcrossHosts[k] {
				delete(req.Header, k)
			}
		}
	}
	return nil
}
