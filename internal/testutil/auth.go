package testutil

// The tokens of AuthConfig, set in the environment as TN_AGENT, TN_ADMIN
// and TN_DEBUG; BadSecret is configured nowhere.
const (
	AgentSecret = "agent-secret-4f9a1c7e"
	AdminSecret = "admin-secret-b27d90aa"
	DebugSecret = "debugonly-secret-77e1"
	BadSecret   = "not-a-configured-token"
)

// AuthConfig: agent-a may use debug_echo and mine_*; ops is an admin with
// every tool; dbg may use the tools of source "debug".
const AuthConfig = `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
	{"name": "agent-a", "token": "${TN_AGENT}", "tools": ["debug_echo", "mine_*"]},
	{"name": "ops", "token": "${TN_ADMIN}", "admin": true},
	{"name": "dbg", "token": "${TN_DEBUG}", "tools": ["source:debug"]}]}}`

// SetAuthEnv puts AuthConfig's tokens in the environment for the test.
func SetAuthEnv(t interface{ Setenv(k, v string) }) {
	t.Setenv("TN_AGENT", AgentSecret)
	t.Setenv("TN_ADMIN", AdminSecret)
	t.Setenv("TN_DEBUG", DebugSecret)
}

// The tokens of TwoPrincipalsConfig, set in the environment as TN_A,
// TN_B and TN_O.
const (
	TokA = "agent-a-secret-91d2"
	TokB = "agent-b-secret-3c55"
	TokO = "ops-secret-e04b7f12"
)

// TwoPrincipalsConfig serves the builtins (webfetch off) and the debug
// tools to agent-a, agent-b and the admin ops; extra is spliced in before
// "auth" (it starts with a comma).
func TwoPrincipalsConfig(extra string) string {
	return `{"skills": [], "builtins": {"tools": {"webfetch": false}}, "debug": true` + extra + `, "auth": {"tokens": [
		{"name": "agent-a", "token": "${TN_A}"}, {"name": "agent-b", "token": "${TN_B}"},
		{"name": "ops", "token": "${TN_O}", "admin": true}]}}`
}

// SetTwoPrincipalsEnv puts TwoPrincipalsConfig's tokens in the
// environment for the test.
func SetTwoPrincipalsEnv(t interface{ Setenv(k, v string) }) {
	t.Setenv("TN_A", TokA)
	t.Setenv("TN_B", TokB)
	t.Setenv("TN_O", TokO)
}
