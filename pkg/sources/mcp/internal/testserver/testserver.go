// Package testserver is a small MCP server built on the official go-sdk,
// used by the mcp source's tests over stdio (the mcptestserver binary) and
// streamable HTTP (in process). Each tool exercises one behaviour of the
// source: result mappings, naming, list_changed, cancellation, process
// trees.
package testserver

//lint:file-ignore SA1019 MCP logging is deprecated in the newest protocol but still what servers and clients use to relay log messages; toolnexus relays it both ways.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server.
type Options struct {
	// PageSize is the tools/list page size (0: the SDK default).
	PageSize int
	// Filler adds tools filler_01..filler_N, for paging.
	Filler int
	// HangCommand, if set, is run by the "spawn" tool as a grandchild that
	// never exits, to prove the process tree is killed.
	HangCommand []string
	// Attack adds the tools read_file, write_file and dial, which try
	// what a confined server must not do and report the error, for the
	// sandbox's attack tests.
	Attack bool
}

var object = json.RawMessage(`{"type":"object"}`)

// Server is the test server and the counters tests look at.
type Server struct {
	*mcp.Server
	// Cancelled counts tool calls whose context the client cancelled.
	Cancelled atomic.Int64
	// Slow counts calls of the slow tool that have begun.
	Slow atomic.Int64
	// Lists counts tools/list requests.
	Lists atomic.Int64

	stop     chan struct{}
	stopOnce sync.Once
}

// Stop releases every slow call and closes every session the server still
// holds (an HTTP client that vanished never says goodbye), so a test ends
// with nothing running. Safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	for ss := range s.Sessions() {
		_ = ss.Close()
	}
}

func text(parts ...string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	for _, p := range parts {
		res.Content = append(res.Content, &mcp.TextContent{Text: p})
	}
	return res
}

// New builds the server.
func New(opts Options) *Server {
	s := &Server{stop: make(chan struct{})}
	s.Server = mcp.NewServer(&mcp.Implementation{Name: "toolnexus-testserver", Version: "1"}, &mcp.ServerOptions{
		PageSize: opts.PageSize,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		// Advertise tools.listChanged even before a tool is added at runtime.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{}},
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				s.Lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	add := func(name, desc string, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	}
	// The tools that show how results map come first; those that show
	// behaviour (progress, cancellation, list changes, hangs) next.
	add("echo", "Echo the text argument.",
		json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(args.Text), nil
		})
	add("args", "Return the raw arguments.", object, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(string(req.Params.Arguments)), nil
	})
	add("multi", "Two text parts.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("one", "two"), nil
	})
	add("structured", "Structured content beside text.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text("the sum is 3")
		res.StructuredContent = map[string]any{"sum": 3, "ok": true}
		return res, nil
	})
	add("fail", "An error result with two text parts.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text("bad", "worse")
		res.IsError = true
		return res, nil
	})
	add("fail_empty", "An error result without text.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text()
		res.IsError = true
		return res, nil
	})
	add("rich", "Every kind of content part.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a picture"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///r.md", MIMEType: "text/markdown", Text: "# r"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
			&mcp.ResourceLink{URI: "file:///l.txt", Name: "l.txt", MIMEType: "text/plain"},
		}}, nil
	})
	s.addBehaviourTools(opts, add)
	return s
}

// addTool adds one tool to the server.
type addTool func(name, desc string, schema json.RawMessage, h mcp.ToolHandler)

// addBehaviourTools adds the tools that report progress, wait, count,
// change the list, hang or attack, as opts asks.
func (s *Server) addBehaviourTools(opts Options, add addTool) {
	add("report", "Three progress notifications (with a token) and three log messages, then the result.", object,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 3; i++ {
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step " + strconv.Itoa(i)})
				}
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "report", Data: map[string]any{"step": i}})
			}
			return text("reported"), nil
		})
	add("meta", "The call's _meta as JSON, then the traceparent header of the HTTP request that carried it (empty on stdio).", object,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			header := ""
			if req.Extra != nil && req.Extra.Header != nil {
				header = req.Extra.Header.Get("traceparent")
			}
			return text(string(b), header), nil
		})
	add("pid", "The server's process id.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	add("where", "The working directory and the value of the variable named by name.",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Name string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			wd, _ := os.Getwd()
			return text(wd, os.Getenv(args.Name)), nil
		})
	add("weird name.v2", "A name that needs sanitizing.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("weird"), nil
	})
	add("slow", "Wait until cancelled.", object, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.Slow.Add(1)
		select {
		case <-ctx.Done():
			s.Cancelled.Add(1)
			return nil, ctx.Err()
		case <-s.stop:
			return nil, errors.New("server stopping")
		}
	})
	add("cancelled", "How many calls were cancelled.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.FormatInt(s.Cancelled.Load(), 10)), nil
	})
	add("slow_started", "How many slow calls have begun.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.FormatInt(s.Slow.Load(), 10)), nil
	})
	add("add_tool", "Add a tool named by the name argument (sends list_changed).",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Name string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			n := args.Name
			add(n, "Added at runtime.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("I am " + n), nil
			})
			return text("added " + n), nil
		})
	if len(opts.HangCommand) > 0 {
		add("spawn", "Start a grandchild that never exits; return its pid.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.Command(opts.HangCommand[0], opts.HangCommand[1:]...)
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(strconv.Itoa(cmd.Process.Pid)), nil
		})
	}
	if opts.Attack {
		pathArgs := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"addr":{"type":"string"}}}`)
		type attackArgs struct{ Path, Content, Addr string }
		attack := func(f func(attackArgs) (string, error)) mcp.ToolHandler {
			return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a attackArgs
				if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
					return nil, err
				}
				out, err := f(a)
				if err != nil {
					res := text(err.Error())
					res.IsError = true
					return res, nil
				}
				return text(out), nil
			}
		}
		add("read_file", "Read the file at path.", pathArgs, attack(func(a attackArgs) (string, error) {
			b, err := os.ReadFile(a.Path)
			return string(b), err
		}))
		add("write_file", "Write content to the file at path.", pathArgs, attack(func(a attackArgs) (string, error) {
			return "written", os.WriteFile(a.Path, []byte(a.Content), 0o644)
		}))
		add("dial", "Open a TCP connection to addr.", pathArgs, attack(func(a attackArgs) (string, error) {
			c, err := net.DialTimeout("tcp", a.Addr, 5*time.Second)
			if err != nil {
				return "", err
			}
			c.Close()
			return "connected", nil
		}))
	}
	for i := 1; i <= opts.Filler; i++ {
		n := fmt.Sprintf("filler_%02d", i)
		add(n, "Filler for paging.", object, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(n), nil
		})
	}
}

// Hang reads stdin and never answers: a server stuck in initialize. It
// ignores SIGTERM and stdin EOF, so only a kill ends it.
func Hang() {
	signalIgnore()
	_, _ = io.Copy(io.Discard, os.Stdin)
	for { // not select{}: the runtime would call that a deadlock and exit
		time.Sleep(time.Hour)
	}
}

// signalIgnore ignores SIGTERM on purpose: the source must escalate to a kill.
func signalIgnore() { ignoreTerm() }
