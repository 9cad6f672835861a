// Package codehealth holds the repository's structural rules as tests:
// no function longer than MaxFuncLines, and pkg/server's share of the test
// lines at most MaxServerTestShare (pkg/server is for tests that need
// whole server processes; protocol tests live with the code they test).
// It has no code of its own: `go test ./internal/codehealth` parses the
// tree and fails naming what breaks a rule.
package codehealth

// MaxFuncLines is the longest a function may be, from its signature to its
// closing brace, tests included.
const MaxFuncLines = 120

// MaxServerTestShare is the largest fraction of the repository's
// non-generated *_test.go lines pkg/server may hold.
const MaxServerTestShare = 0.20
