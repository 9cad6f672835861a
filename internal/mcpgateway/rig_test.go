package mcpgateway_test

// The tokens of the tests that authenticate.
const (
	agentSecret = "agent-secret-4f9a1c7e"
	adminSecret = "admin-secret-b27d90aa"
)
