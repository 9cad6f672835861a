package executor

import (
	"fmt"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// truncateContent applies limits.maxOutputBytes to a rich result's parts,
// apart from Output (its text view, capped on its own): parts are kept in
// order while their bytes fit; the text part that crosses the limit is cut
// on a character boundary, and every later text, media or resource part
// that does not fit is replaced by a text part saying what was omitted. The
// model always learns that something was there.
func truncateContent(res tool.Result, limit int) tool.Result {
	out := make([]tool.Content, 0, len(res.Content))
	left := limit
	for _, c := range res.Content {
		size := c.Size()
		switch {
		case size <= left:
			out = append(out, c)
			left -= size
		case c.Kind == tool.ContentText && left > 0:
			cut := left
			for cut > 0 && c.Text[cut]&0xC0 == 0x80 {
				cut--
			}
			out = append(out, tool.Text(c.Text[:cut]+fmt.Sprintf("%s%d bytes omitted; limits.maxOutputBytes is %d]", TruncationMarker, len(c.Text)-cut, limit)))
			left = 0
		default:
			what := c.Kind.String()
			if c.MIMEType != "" {
				what += " " + c.MIMEType
			}
			if c.URI != "" {
				what += " " + c.URI
			}
			out = append(out, tool.Text(fmt.Sprintf("[%s omitted: %d bytes; limits.maxOutputBytes is %d]", what, size, limit)))
		}
	}
	res.Content = out
	markTruncated(&res)
	return res
}
