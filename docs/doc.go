// Package docs holds no code: it is the home of the documentation, and its
// tests run what the pages show — every shell command, config snippet,
// Cedar policy, Go program and nginx config in README.md and docs/*.md —
// and compare the texts the pages quote with what the server says. The
// conventions (which blocks run how, and the one marker for a block that
// is only illustrative) are in docs/README.md.
package docs
