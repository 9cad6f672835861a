package builtin

import (
	"context"
	"fmt"
	"io"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// liveOutput is where bash's pipe reader copies the command's output: the
// capped buffer the result is made from and, when the call streams, the
// caller as well. Each read of the pipe returns what the command has
// written so far, and is reported at once — no timer, no line buffering —
// so a line reaches the caller as soon as the command writes it.
//
// stdout and stderr share one pipe, as in a terminal (that is what keeps
// their order in the result), so the live view reports both as stdout.
// What is reported live stops at the same cap as the result, with one note
// saying so: a runaway command must not flood the caller either.
func liveOutput(ctx context.Context, out *capWriter) io.Writer {
	if !tool.Streaming(ctx) {
		return out
	}
	return &liveWriter{ctx: ctx, out: out, left: out.max}
}

type liveWriter struct {
	ctx  context.Context
	out  *capWriter
	left int // bytes still to report live
}

func (w *liveWriter) Write(p []byte) (int, error) {
	n, _ := w.out.Write(p)
	switch {
	case w.left <= 0:
	case len(p) <= w.left:
		tool.Output(w.ctx, tool.Stdout, p)
		w.left -= len(p)
	default:
		tool.Output(w.ctx, tool.Stdout, p[:w.left])
		w.left = 0
		tool.Output(w.ctx, tool.Stdout, fmt.Appendf(nil, "\n[live output stopped at %d bytes; the result says how much was omitted]\n", w.out.max))
	}
	return n, nil
}
