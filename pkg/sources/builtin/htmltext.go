package builtin

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText renders an HTML page as plain text: the text of the elements,
// a line break around block elements, nothing from script, style and other
// non-content elements. Whitespace runs inside a line become one space and
// runs of blank lines become one blank line.
func htmlToText(src string) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return src
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head, atom.Svg, atom.Iframe, atom.Object:
				return
			case atom.Br:
				b.WriteByte('\n')
				return
			}
		case html.CommentNode, html.DoctypeNode:
			return
		}
		block := n.Type == html.ElementNode && blockElement(n.DataAtom)
		if block {
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			b.WriteByte('\n')
		}
	}
	walk(doc)
	return collapseBlank(b.String())
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
