// Package htmltext turns an HTML page into readable plain text for the
// webfetch tool's text format.
package htmltext

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text renders an HTML page as plain text: the text of the elements,
// a line break around block elements, nothing from script, style and other
// non-content elements. Whitespace runs inside a line become one space and
// runs of blank lines become one blank line.
//
// It streams the page through the tokenizer instead of building a DOM, so
// its memory is about the size of the text it produces: a 5 MiB page costs
// a few MiB, not the hundreds a tree of nodes would.
func Text(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0 // depth inside elements whose content is not text
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapseBlank(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch {
			case skipElement(a):
				if tt == html.StartTagToken {
					skip++
				}
			case skip > 0:
			case a == atom.Br:
				b.WriteByte('\n')
			case blockElement(a):
				b.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch {
			case skipElement(a):
				if skip > 0 {
					skip--
				}
			case skip == 0 && blockElement(a):
				b.WriteByte('\n')
			}
		}
	}
}

func skipElement(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Svg, atom.Iframe, atom.Object:
		return true
	}
	return false
}

func blockElement(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside, atom.Main,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd,
		atom.Table, atom.Tr, atom.Td, atom.Th, atom.Thead, atom.Tbody, atom.Tfoot, atom.Pre, atom.Blockquote,
		atom.Hr, atom.Form, atom.Fieldset, atom.Figure, atom.Figcaption, atom.Title, atom.Body, atom.Html:
		return true
	}
	return false
}

// collapseBlank trims each line, squeezes whitespace runs inside it, keeps
// at most one blank line between paragraphs and trims the whole text.
func collapseBlank(s string) string {
	var out []string
	blank := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
