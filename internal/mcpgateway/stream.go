package mcpgateway

//lint:file-ignore SA1019 MCP logging is deprecated in the newest protocol but is still how MCP clients receive a tool's log messages.

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// trackLevels remembers the sessions whose client sent logging/setLevel:
// only their calls (and calls carrying a progress token or a per-request
// log level) get a sink, so a plain tools/call stays a plain call. An entry
// lives as long as its session.
func (g *Gateway) trackLevels(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "logging/setLevel" && err == nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				if _, had := g.levels.LoadOrStore(ss, struct{}{}); !had {
					g.forgetWhenDone(ss, func() { g.levels.Delete(ss) })
				}
			}
		}
		return res, err
	}
}

// forgetWhenDone runs forget (which drops ss's entry in levels or
// resumable) when ss ends, on a goroutine Close joins.
func (g *Gateway) forgetWhenDone(ss *mcp.ServerSession, forget func()) {
	g.levelsMu.Lock()
	defer g.levelsMu.Unlock()
	if g.levelsClosed {
		return // Close is closing every session; nothing to forget
	}
	g.levelWatchers.Go(func() {
		_ = ss.Wait()
		forget()
	})
}

// callSink is how a tools/call hears what its tool reports: progress as
// notifications/progress for the request's progress token, log messages
// as notifications/message (the SDK drops those below the level the client
// set), and live output as notifications/message too, at info, logger
// "stdout" or "stderr". Nil when the client asked for neither.
type callSink struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	logs  bool

	mu   sync.Mutex
	done bool // the result is being sent: nothing may follow it
}

func (g *Gateway) sinkFor(ctx context.Context, req *mcp.CallToolRequest) *callSink {
	token := req.Params.GetProgressToken()
	_, perRequest := req.Params.Meta[mcp.MetaKeyLogLevel]
	_, perSession := g.levels.Load(req.Session)
	logs := perRequest || perSession
	if token == nil && !logs {
		return nil
	}
	return &callSink{ctx: ctx, ss: req.Session, token: token, logs: logs}
}

func (s *callSink) send(e tool.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	switch e.Kind {
	case tool.EventProgress:
		if s.token != nil {
			_ = s.ss.NotifyProgress(s.ctx, &mcp.ProgressNotificationParams{ProgressToken: s.token, Progress: e.Progress, Total: e.Total, Message: e.Message})
		}
	case tool.EventLog:
		if s.logs {
			_ = s.ss.Log(s.ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(e.Level), Logger: e.Logger, Data: e.Data})
		}
	case tool.EventOutput:
		if s.logs {
			logger := "stdout"
			if e.Stream == tool.Stderr {
				logger = "stderr"
			}
			_ = s.ss.Log(s.ctx, &mcp.LoggingMessageParams{Level: "info", Logger: logger, Data: string(e.Bytes)})
		}
	}
}

func (s *callSink) stop() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// toContent is a rich result's parts as MCP content.
func toContent(parts []tool.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(parts))
	for _, c := range parts {
		switch c.Kind {
		case tool.ContentText:
			out = append(out, &mcp.TextContent{Text: c.Text})
		case tool.ContentImage:
			out = append(out, &mcp.ImageContent{MIMEType: c.MIMEType, Data: c.Data})
		case tool.ContentAudio:
			out = append(out, &mcp.AudioContent{MIMEType: c.MIMEType, Data: c.Data})
		case tool.ContentResource:
			rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType}
			if c.Blob {
				rc.Blob = c.Data
				if rc.Blob == nil {
					rc.Blob = []byte{}
				}
			} else {
				rc.Text = c.Text
			}
			out = append(out, &mcp.EmbeddedResource{Resource: rc})
		case tool.ContentResourceLink:
			name := c.Name
			if name == "" {
				name = c.URI
			}
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: name, MIMEType: c.MIMEType})
		}
	}
	return out
}
