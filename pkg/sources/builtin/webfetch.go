package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/internal/htmltext"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const (
	// DefaultFetchTimeout applies when the call gives no timeout.
	DefaultFetchTimeout = 30 * time.Second
	// MaxFetchTimeout is the longest timeout a call may ask for.
	MaxFetchTimeout = 120 * time.Second
	// MaxFetchBody is the largest response body webfetch reads; a larger
	// one is a failure rather than a silently cut page.
	MaxFetchBody = 5 << 20
	// MaxMarkdownInput is the largest HTML page converted to markdown; a
	// larger one is converted to text (metadata format "text"), which
	// needs memory in proportion to the text, not to a document tree.
	MaxMarkdownInput = 512 << 10
	// maxRedirects is how many redirects one fetch follows.
	maxRedirects = 10
)

type webfetchArgs struct {
	URL     string   `json:"url"`
	Format  string   `json:"format"`
	Timeout *float64 `json:"timeout"`
}

// newFetchClient is the one client every webfetch call shares. Keep-alives
// are off: calls go to arbitrary hosts, so pooled connections would rarely
// be reused and would keep goroutines alive between calls. Every connection
// goes through the dial guard (webfetch_guard.go).
func newFetchClient(allow allowList) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	tr.DialContext = guardedDial(allow)
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
}

// newMarkdownConverter builds the HTML→Markdown converter once; it is safe
// for concurrent use.
func newMarkdownConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
}

func (t *toolset) webfetch(ctx context.Context, c tool.Call) tool.Result {
	var a webfetchArgs
	if r := decodeArgs("webfetch", c, &a); r != nil {
		return *r
	}
	if a.URL == "" {
		return *invalid("webfetch: url is required")
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return *invalid("webfetch: url must be an absolute http:// or https:// URL")
	}
	format := a.Format
	switch format {
	case "":
		format = "markdown"
	case "markdown", "text", "html":
	default:
		return *invalid("webfetch: format must be one of text, markdown, html")
	}
	timeout := DefaultFetchTimeout
	if a.Timeout != nil {
		s := *a.Timeout
		if s <= 0 || math.IsNaN(s) {
			return *invalid("webfetch: timeout must be a positive number of seconds")
		}
		timeout = min(time.Duration(s*float64(time.Second)), MaxFetchTimeout)
	}

	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail("webfetch: %v", err)
	}
	req.Header.Set("User-Agent", "toolnexus-webfetch/1")
	req.Header.Set("Accept", acceptFor(format))
	resp, err := t.client.Do(req)
	if err != nil {
		return t.fetchError(ctx, fctx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tool.Failure(fmt.Sprintf("HTTP %d", resp.StatusCode), map[string]any{"status": resp.StatusCode})
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFetchBody+1))
	if err != nil {
		return t.fetchError(ctx, fctx, timeout, err)
	}
	if len(body) > MaxFetchBody {
		return fail("webfetch: response body is larger than %d bytes (5 MiB); fetch a smaller page", MaxFetchBody)
	}

	out := string(body)
	if format != "html" && isHTML(resp.Header.Get("Content-Type"), body) {
		switch format {
		case "markdown":
			if len(body) > MaxMarkdownInput {
				// The converter builds a DOM and more: about 80 times the
				// page in memory. A page this large becomes text, which
				// streams.
				out, format = htmltext.Text(out), "text"
				break
			}
			md, err := t.md.ConvertString(out, converter.WithDomain(resp.Request.URL.String()), converter.WithContext(fctx))
			if err != nil {
				return fail("webfetch: cannot convert the page to markdown: %v", err)
			}
			out = strings.TrimSpace(md)
		case "text":
			out = htmltext.Text(out)
		}
	}
	meta := map[string]any{"status": resp.StatusCode, "format": format}
	out, truncated := capText(out, t.cap)
	if truncated {
		meta["truncated"] = true
	}
	return tool.Success(out, meta)
}

// fetchError tells the caller's cancellation, our own timeout and a
// network failure apart.
func (t *toolset) fetchError(ctx, fctx context.Context, timeout time.Duration, err error) tool.Result {
	if ctx.Err() != nil {
		return tool.ContextResult(ctx, "webfetch")
	}
	if errors.Is(fctx.Err(), context.DeadlineExceeded) {
		return tool.Result{
			Output:  fmt.Sprintf("webfetch: request timed out after %s", timeout),
			IsError: true,
			Outcome: tool.OutcomeTimeout,
		}
	}
	if b, ok := asBlocked(err); ok {
		return fail("webfetch: %v", b).Refused(tool.RefusalNetworkAddress)
	}
	return fail("webfetch: %v", err)
}

func acceptFor(format string) string {
	switch format {
	case "html":
		return "text/html,application/xhtml+xml,*/*;q=0.8"
	case "text":
		return "text/plain,text/html;q=0.9,*/*;q=0.8"
	}
	return "text/markdown,text/html;q=0.9,text/plain;q=0.8,*/*;q=0.5"
}

// isHTML decides whether a body is HTML to convert: by its Content-Type,
// or by a sniff when the server sent none.
func isHTML(contentType string, body []byte) bool {
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.Contains(contentType, "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}
