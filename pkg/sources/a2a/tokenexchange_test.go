package a2a_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
)

// An agent with tokenExchange, against a real provider (zitadel/oidc), gets, on every call, a token for itself whose
// subject is the caller — never the caller's token; the card fetch (no
// caller) carries none, and a call with no caller identity is an is_error
// result naming the agent.
func TestTokenExchangeToAgent(t *testing.T) {
	p := oidcop.Start(t, oidcop.Client{ID: "toolnexus", Secret: "exchange-secret-0001"},
		oidcop.Client{ID: "alice-agent", Secret: "alice-secret", Subject: "alice"})
	au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: "toolnexus", PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: time.Minute}}}, auth.Options{})
	callerTok := p.Token(t, "alice-agent", "toolnexus", "")
	caller, err := au.Check(t.Context(), callerTok)
	if err != nil {
		t.Fatal(err)
	}
	agent := newFakeAgent(t, "1.0")
	cfg := agentConfig(agent.cardURL())
	cfg.TokenExchange = &tokenexchange.Config{TokenURL: p.TokenURL, ClientID: "toolnexus", ClientSecret: "exchange-secret-0001", Audience: "https://agent.test"}
	s := startAgent(t, "fake", cfg, sources.Env{})
	if s.err != nil {
		t.Fatalf("Start: %v", s.err)
	}
	res := execute(auth.With(context.Background(), caller), s.reg, "Fake_Agent_echo", "complete after 1")
	if res.IsError {
		t.Fatalf("call: %+v", res)
	}
	for _, r := range agent.requestsFor("card") {
		if h := r.Header.Get("Authorization"); h != "" {
			t.Errorf("the card fetch carried Authorization %q", h)
		}
	}
	for _, m := range []string{"SendMessage", "GetTask"} {
		for _, r := range agent.requestsFor(m) {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || tok == callerTok {
				t.Fatalf("%s: the agent got the caller's own token or none", m)
			}
			c := oidcop.MustClaims(t, tok)
			if aud, _ := c["aud"].([]any); c["sub"] != "alice" || c["aud"] != "https://agent.test" && (len(aud) != 1 || aud[0] != "https://agent.test") {
				t.Fatalf("%s: exchanged token claims %v", m, c)
			}
		}
	}
	res = execute(context.Background(), s.reg, "Fake_Agent_echo", "complete after 1")
	if !res.IsError || !strings.Contains(res.Output, "token exchange for agent fake failed") {
		t.Fatalf("a call without a caller identity: %+v", res)
	}
}
