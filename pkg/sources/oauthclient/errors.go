package oauthclient

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// ErrNotConnected is a caller without a usable connection to an upstream
// (none yet, disconnected, or its refresh was refused): the call asks the
// caller to log in.
var ErrNotConnected = errors.New("not connected")

// Error is an OAuth failure as a caller reads it: what failed and why,
// never a token, a code or a secret.
type Error struct {
	Reason string
	// NotConnected marks a failure that a new login fixes (the refresh
	// token was refused): errors.Is(err, ErrNotConnected).
	NotConnected bool
}

func (e *Error) Error() string { return e.Reason }

// Is makes a failure that a login fixes match ErrNotConnected.
func (e *Error) Is(target error) bool { return target == ErrNotConnected && e.NotConnected }

func failf(format string, args ...any) *Error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// tokenError says why a token endpoint did not give a token: the RFC 6749
// error code when it sent one, or what was wrong with its answer. The
// endpoint's own text is left out: it may echo the request (a code, a
// refresh token) back.
func tokenError(what string, err error) *Error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" && tokenChars(re.ErrorCode) {
			return failf("the authorization server refused the %s (%s)", what, re.ErrorCode)
		}
		if re.Response != nil && re.Response.StatusCode != http.StatusOK {
			return failf("the authorization server refused the %s (HTTP %d)", what, re.Response.StatusCode)
		}
		return failf("the authorization server's answer to the %s is not a token response", what)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return failf("the authorization server's token endpoint cannot be reached for the %s: %v", what, netReason(ue.Err))
	}
	if strings.Contains(err.Error(), "cannot parse json") || strings.Contains(err.Error(), "server response missing access_token") ||
		strings.Contains(err.Error(), "cannot fetch token") {
		return failf("the authorization server's answer to the %s is not a token response", what)
	}
	return failf("the %s failed: the token endpoint's answer could not be used", what)
}

// netReason is a transport error without its URL (the caller knows it).
func netReason(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer in time"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err.Error()
	}
	return err.Error()
}

// tokenChars reports whether s is a plain error code (RFC 6749: printable
// ASCII without quote or backslash; here also no space), safe to repeat.
func tokenChars(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// maxBody bounds every answer read from an authorization server or a
// metadata document: a server answering megabytes is cut off, its answer
// then fails to parse.
const maxBody = 256 << 10

// defaultHTTPClient is the client for authorization servers: bounded in
// time, no redirects followed on a token request.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 15 * time.Second
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// bounded wraps c's transport so no body read through it exceeds maxBody.
func bounded(c *http.Client) *http.Client {
	out := *c
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = boundedTransport{rt}
	return &out
}

type boundedTransport struct{ base http.RoundTripper }

func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = limitedBody{io.LimitReader(resp.Body, maxBody), resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	c io.Closer
}

func (l limitedBody) Close() error { return l.c.Close() }
