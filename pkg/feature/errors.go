package feature

import (
	"errors"
	"fmt"
	"time"
)

// Kind says what went wrong with a feature request, for a front-end to map
// to its wire (gRPC status, JSON-RPC error code).
type Kind uint8

// The kinds of Error.
const (
	// NotFound: no such resource or prompt — or one the caller may not
	// see, which reads exactly the same.
	NotFound Kind = iota + 1
	// Denied: a policy refused it.
	Denied
	// InvalidArgument: the request itself is malformed.
	InvalidArgument
	// TooLarge: the upstream's answer is over a size limit.
	TooLarge
	// Throttled: a rate limit refused it; RetryAfter says when to retry.
	Throttled
	// Unavailable: the upstream is down or did not answer in time.
	Unavailable
	// Upstream: the upstream answered with an error of its own (Code is
	// its JSON-RPC code).
	Upstream
)

var kindNames = [...]string{NotFound: "not_found", Denied: "denied", InvalidArgument: "invalid_arguments",
	TooLarge: "too_large", Throttled: "rate_limited", Unavailable: "unavailable", Upstream: "upstream_error"}

// String is the kind's metrics and audit label.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "error"
}

// Error is a feature request that did not succeed.
type Error struct {
	Kind Kind
	// Msg is what the caller reads. It never holds a secret.
	Msg string
	// Code is the upstream's JSON-RPC error code (Kind Upstream).
	Code int64
	// RetryAfter is how long to wait (Kind Throttled).
	RetryAfter time.Duration
	// Limit is the config key that refused it (Kind Throttled, TooLarge).
	Limit string
}

func (e *Error) Error() string { return e.Msg }

// Errorf makes an Error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// KindOf is err's kind: Unavailable for an error that is not an *Error.
func KindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return Unavailable
}
