package config

import (
	"fmt"
	"strings"
)

// PrincipalSeparator joins a named issuer's name and a subject into the
// principal name: "corp:alice".
const PrincipalSeparator = ":"

// checkIssuerName accepts an auth.oidc name: a short word that cannot be
// mistaken for anything else in a principal name or in a list that names
// principals and groups ("group:NAME").
func checkIssuerName(key, name string) error {
	if name == "" {
		return nil
	}
	if len(name) > 32 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" || name[0] == '-' || name[0] == '_' {
		return keyErr(key, "%q is not a short name: use 1-32 lower-case letters, digits, '-' or '_', starting with a letter or digit (e.g. \"corp\")", name)
	}
	if name == "group" {
		return keyErr(key, "\"group\" is reserved: \"group:NAME\" names a group in policy.approvers; choose another name")
	}
	return nil
}

// checkIdentityNames keeps the identity sources' principals apart: static
// token names are bare, a named issuer's principals are "NAME:subject",
// and at most one issuer may go unnamed (its subjects bare, as before
// names existed). So two issuers cannot both say "alice", and a static
// token cannot be named as a named issuer's principal. (A subject of the
// unnamed issuer equal to a static token's name, or spelt like a named
// issuer's principal, is refused when its token is verified.)
func checkIdentityNames(a Auth) error {
	names := map[string]bool{}
	unnamed := -1
	for i, iss := range a.OIDC {
		key := fmt.Sprintf("auth.oidc[%d].name", i)
		if len(a.OIDC) == 1 {
			key = "auth.oidc.name"
		}
		if iss.Name == "" {
			if unnamed >= 0 {
				return keyErr(key, "is required: auth.oidc[%d] has no name either, and two issuers without a name would share principal names (both could say \"alice\"); give each a short name such as \"corp\"", unnamed)
			}
			unnamed = i
			continue
		}
		if names[iss.Name] {
			return keyErr(key, "%q is used twice; each issuer needs its own name", iss.Name)
		}
		names[iss.Name] = true
	}
	for i, t := range a.Tokens {
		if prefix, _, ok := strings.Cut(t.Name, PrincipalSeparator); ok && names[prefix] {
			return keyErr(fmt.Sprintf("auth.tokens[%d].name", i), "%q reads as a principal of the issuer named %q; choose a token name without %q", t.Name, prefix, PrincipalSeparator)
		}
	}
	return nil
}
