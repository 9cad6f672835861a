// Package a2a turns remote A2A (Agent2Agent) agents into tools.
//
// Each configured agent is one source (layer a2a/ID). Start GETs the agent
// card, picks its JSON-RPC endpoint — protocol 1.0 when the card offers it,
// else 0.3 — and publishes one tool per skill, named
// sanitize(card.name)_sanitize(skill.id), whose only argument is the task:
//
//	{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}
//
// A call submits the task without blocking, then polls every pollEvery
// until the task ends. A completed task answers with the text of its
// artifacts; a failed or canceled one is a failure "A2A task ID failed:
// MESSAGE". When the timeout passes or the caller gives up, the task is
// canceled on the agent too. Every result carries the metadata
// {agent, taskId, state, polls, ms}.
//
// A task that stops in input-required or auth-required suspends the call:
// the result is OUTCOME_PENDING with a PendingRequest of kind "input" whose
// prompt is the agent's message. The caller's answer (same tool, same
// arguments, Answer.data the text or parts) goes to the agent as the next
// message of the same task and context, and the call goes on from there; a
// declined request (ok false) or one nobody answers within
// limits.pendingTimeout cancels the task on the agent.
//
// In a config file:
//
//	"agents": {
//	  "reviewer": {
//	    "card": "https://agents.example.test/.well-known/agent-card.json",
//	    "headers": {"Authorization": "Bearer ${REVIEWER_TOKEN}"},
//	    "timeout": 300000,
//	    "pollEvery": 1000
//	  }
//	}
//
// From Go:
//
//	agents, warnings, err := a2a.ParseConfig(raw)
//	src := a2a.New("reviewer", agents["reviewer"], sources.Env{})
//	err = src.Start(ctx, reg) // reg is a *registry.Registry
//	defer src.Close(context.Background())
//
// ${VAR} in header values is expanded from the environment at Start; the
// values never reach a log line, an error or a result.
package a2a
