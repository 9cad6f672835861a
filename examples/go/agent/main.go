// Command agent sketches the loop an LLM agent runs against toolnexus:
// export the tools in the provider's shape, send them with the conversation,
// execute every tool call the model makes, hand the results back, repeat
// until the model answers in plain text.
//
// No LLM is needed to run it: a scripted model replays one fixed tool call
// and then answers with what the tool said. Swap replayModel for a real
// client (OpenAI's chat completions take the exported JSON as `tools` and
// return `tool_calls` in exactly the shape used here).
//
//	go run ./examples/go/agent -addr 127.0.0.1:50051 -tool todowrite \
//	    -args '{"todos":[{"id":"1","text":"ship it","completed":false}]}'
//
// -addr also takes dns:///toolnexus-headless:50051, where calls are spread
// over every replica (round_robin). $TOOLNEXUS_TOKEN is sent as a bearer token.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// message is one chat message in OpenAI's shape.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// toolCall is one entry of an assistant message's tool_calls.
type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is JSON text exactly as the model wrote it.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// model is the one thing a real agent would plug an LLM into.
type model interface {
	// Complete returns the next assistant message given the conversation and
	// the tool declarations (the ExportTools JSON, as is).
	Complete(ctx context.Context, messages []message, tools json.RawMessage) (message, error)
}

// replayModel calls one fixed tool, then answers with the tool's output.
type replayModel struct{ call toolCall }

func (m replayModel) Complete(_ context.Context, messages []message, tools json.RawMessage) (message, error) {
	last := messages[len(messages)-1]
	if last.Role == "tool" {
		return message{Role: "assistant", Content: m.call.Function.Name + " said: " + last.Content}, nil
	}
	// A model can only call what it was offered.
	var decls []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(tools, &decls); err != nil {
		return message{}, fmt.Errorf("tool declarations are not OpenAI JSON: %w", err)
	}
	for _, d := range decls {
		if d.Function.Name == m.call.Function.Name {
			return message{Role: "assistant", ToolCalls: []toolCall{m.call}}, nil
		}
	}
	return message{}, fmt.Errorf("the server offers no tool named %q; pick one from `toolnexus tools`", m.call.Function.Name)
}

// maxTurns stops a model that keeps calling tools forever.
const maxTurns = 8

// runAgent is the loop. It prints the transcript to w.
func runAgent(ctx context.Context, reg pb.RegistryServiceClient, m model, prompt string, w io.Writer) error {
	exp, err := reg.ExportTools(ctx, &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_OPENAI})
	if err != nil {
		return fmt.Errorf("ExportTools: %w", err)
	}
	tools := json.RawMessage(exp.GetJson())
	var decls []json.RawMessage
	_ = json.Unmarshal(tools, &decls)
	fmt.Fprintf(w, "tools offered to the model: %d\n", len(decls))

	messages := []message{{Role: "user", Content: prompt}}
	fmt.Fprintf(w, "user: %s\n", prompt)
	for range maxTurns {
		reply, err := m.Complete(ctx, messages, tools)
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		messages = append(messages, reply)
		if len(reply.ToolCalls) == 0 {
			fmt.Fprintf(w, "assistant: %s\n", reply.Content)
			return nil
		}
		for _, c := range reply.ToolCalls {
			fmt.Fprintf(w, "assistant calls %s %s\n", c.Function.Name, c.Function.Arguments)
			// arguments_json passes the model's text through untouched.
			resp, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: c.Function.Name,
				Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: c.Function.Arguments}})
			if err != nil {
				// Only transport and caller problems are gRPC errors.
				return fmt.Errorf("execute %s: %w", c.Function.Name, err)
			}
			r := resp.GetResult()
			// A failed tool is still an answer: the model reads why and tries
			// again. OUTCOME_PENDING (e.g. the question tool) would be shown to
			// a human here and resumed with ExecuteRequest.answer.
			outcome := strings.ToLower(strings.TrimPrefix(r.GetOutcome().String(), "OUTCOME_"))
			fmt.Fprintf(w, "tool %s -> %s: %s\n", c.ID, outcome, r.GetOutput())
			messages = append(messages, message{Role: "tool", ToolCallID: c.ID, Content: r.GetOutput()})
		}
	}
	return fmt.Errorf("the model made tool calls for %d turns without answering; giving up", maxTurns)
}

// roundRobin spreads calls over every address a dns:/// target resolves to.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// bearer sends $TOOLNEXUS_TOKEN with every call.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so the sketch works against a loopback
// server; over a network use TLS (credentials.NewTLS) as well.
func (bearer) RequireTransportSecurity() bool { return false }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("TOOLNEXUS_ADDR", "127.0.0.1:50051"), "toolnexus address: HOST:PORT or dns:///NAME:PORT [TOOLNEXUS_ADDR]")
	name := fs.String("tool", "debug_echo", "the tool the scripted model calls")
	arguments := fs.String("args", `{"greeting":"hello from go"}`, "the JSON arguments of that call, as a model would write them")
	prompt := fs.String("prompt", "Please run the tool for me.", "the user's message")
	timeout := fs.Duration("timeout", time.Minute, "bound for the whole conversation")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if !json.Valid([]byte(*arguments)) {
		fmt.Fprintf(stderr, "agent: -args %q is not JSON; give an object such as '{\"path\":\"README.md\"}'\n", *arguments)
		return 2
	}

	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(roundRobin),
	}
	if tok := os.Getenv("TOOLNEXUS_TOKEN"); tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(tok)))
	}
	conn, err := grpc.NewClient(*addr, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "agent: -addr %q: %v\n", *addr, err)
		return 2
	}
	defer conn.Close()

	call := toolCall{ID: "call_1", Type: "function"}
	call.Function.Name, call.Function.Arguments = *name, *arguments
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := runAgent(ctx, pb.NewRegistryServiceClient(conn), replayModel{call: call}, *prompt, stdout); err != nil {
		fmt.Fprintln(stderr, "agent:", err)
		return 1
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
