package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// execStream runs req with ExecuteStream and shows what the tool reports
// as it happens: output on stdout/stderr as it was written, progress as a
// bar on stderr when stderr is a terminal (plain "progress" lines when it
// is not), log messages as lines on stderr. With --json every event is one
// JSON line on stdout instead, the result last. It returns the result and the
// output already shown, so the caller prints only what is left of it.
func (c *cli) execStream(ctx context.Context, reg pb.RegistryServiceClient, req *pb.ExecuteRequest) (*pb.ToolResult, string, error) {
	s, err := reg.ExecuteStream(ctx, req)
	if err != nil {
		return nil, "", err
	}
	tty := isTerminal(c.stderr)
	bar := false // a progress bar is drawn on the current stderr line
	clearBar := func() {
		if bar {
			fmt.Fprint(c.stderr, "\r\x1b[K")
			bar = false
		}
	}
	var shown strings.Builder
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			clearBar()
			return nil, "", errors.New("the stream ended without a result")
		}
		if err != nil {
			clearBar()
			return nil, "", err
		}
		if c.g.json {
			// One event per line, the result last, for programs.
			b, err := protojson.Marshal(ev)
			if err != nil {
				return nil, "", err
			}
			fmt.Fprintf(c.stdout, "%s\n", b)
			if r := ev.GetResult(); r != nil {
				return r, "", nil
			}
			continue
		}
		switch e := ev.GetEvent().(type) {
		case *pb.ExecuteEvent_Output:
			clearBar()
			w := c.stdout
			if e.Output.GetStream() == pb.OutputStream_OUTPUT_STREAM_STDERR {
				w = c.stderr
			}
			_, _ = w.Write(e.Output.GetData())
			shown.Write(e.Output.GetData())
		case *pb.ExecuteEvent_Progress:
			p := e.Progress
			if tty {
				fmt.Fprint(c.stderr, "\r\x1b[K"+progressBar(p))
				bar = true
			} else {
				fmt.Fprintln(c.stderr, "progress "+progressText(p))
			}
		case *pb.ExecuteEvent_Log:
			clearBar()
			l := e.Log
			data, _ := protojson.Marshal(l.GetData())
			if _, ok := l.GetData().GetKind().(*structpb.Value_StringValue); ok {
				data = []byte(l.GetData().GetStringValue())
			}
			who := l.GetLevel()
			if l.GetLogger() != "" {
				who += " " + l.GetLogger()
			}
			fmt.Fprintf(c.stderr, "[%s] %s\n", who, strings.TrimRight(string(data), "\n"))
		case *pb.ExecuteEvent_Result:
			clearBar()
			return e.Result, shown.String(), nil
		}
	}
}

// progressText is "3/10 message" (or "3 message" when the total is unknown).
func progressText(p *pb.ProgressEvent) string {
	s := fmt.Sprintf("%g", p.GetProgress())
	if p.GetTotal() > 0 {
		s += fmt.Sprintf("/%g", p.GetTotal())
	}
	if p.GetMessage() != "" {
		s += " " + p.GetMessage()
	}
	return s
}

// progressBar is a 20-cell bar with the progress text; without a total it
// is the text alone.
func progressBar(p *pb.ProgressEvent) string {
	if p.GetTotal() <= 0 {
		return progressText(p)
	}
	const width = 20
	filled := int(p.GetProgress() / p.GetTotal() * width)
	filled = max(0, min(width, filled))
	return "[" + strings.Repeat("#", filled) + strings.Repeat(" ", width-filled) + "] " + progressText(p)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// describeParts lists a result's non-text parts, one line each, for a
// terminal that cannot show them: "[image image/png, 68 bytes]".
func describeParts(w io.Writer, parts []*pb.Content) {
	for _, p := range parts {
		switch k := p.GetKind().(type) {
		case *pb.Content_Image:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", k.Image.GetMimeType(), len(k.Image.GetData()))
		case *pb.Content_Audio:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", k.Audio.GetMimeType(), len(k.Audio.GetData()))
		case *pb.Content_Resource:
			r := k.Resource
			switch r.GetContents().(type) {
			case *pb.ResourceContent_Text:
				fmt.Fprintf(w, "[resource %s %s, %d bytes of text]\n", r.GetUri(), r.GetMimeType(), len(r.GetText()))
			case *pb.ResourceContent_Blob:
				fmt.Fprintf(w, "[resource %s %s, %d bytes]\n", r.GetUri(), r.GetMimeType(), len(r.GetBlob()))
			default:
				fmt.Fprintf(w, "[resource link %s %s]\n", r.GetUri(), r.GetMimeType())
			}
		}
	}
}
