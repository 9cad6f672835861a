package oidcop

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// ClaimsOf decodes a JWT's claims without checking its signature: what an
// upstream that trusts the provider would read from it.
func ClaimsOf(tok string) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("JWT payload: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("JWT payload: %w", err)
	}
	return m, nil
}

// MustClaims is ClaimsOf that fails the test on a malformed token.
func MustClaims(t testing.TB, tok string) map[string]any {
	t.Helper()
	m, err := ClaimsOf(tok)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
