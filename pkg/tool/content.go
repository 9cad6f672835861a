package tool

import "strings"

// ContentKind says what a Content part holds.
type ContentKind uint8

// The content kinds. A resource carries its text or its bytes; a resource
// link only names one (URI, name, MIME type) for the client to fetch.
const (
	ContentText ContentKind = iota + 1
	ContentImage
	ContentAudio
	ContentResource
	ContentResourceLink
)

var contentKindNames = [...]string{
	ContentText:         "text",
	ContentImage:        "image",
	ContentAudio:        "audio",
	ContentResource:     "resource",
	ContentResourceLink: "resource_link",
}

// String is the kind's lowercase name ("text", "image", ...).
func (k ContentKind) String() string {
	if int(k) < len(contentKindNames) && contentKindNames[k] != "" {
		return contentKindNames[k]
	}
	return "unknown"
}

// Content is one part of a rich result: text, an image, an audio clip, an
// embedded resource or a link to one. Build parts with Text, Image, Audio,
// TextResource, BlobResource and ResourceLink.
type Content struct {
	Kind ContentKind
	// Text is a text part's text or a text resource's contents.
	Text string
	// Data is an image's or audio clip's bytes, or a blob resource's
	// contents (raw bytes, not base64).
	Data []byte
	// MIMEType is the media type of an image, audio clip or resource.
	MIMEType string
	// URI identifies a resource or resource link.
	URI string
	// Name is a resource link's name (MCP requires one; empty elsewhere).
	Name string
	// Blob marks a resource whose contents are Data rather than Text.
	Blob bool
}

// Size is the number of bytes the part carries (text or data).
func (c Content) Size() int { return len(c.Text) + len(c.Data) }

// Text is a text part.
func Text(s string) Content { return Content{Kind: ContentText, Text: s} }

// Image is an image part, e.g. Image("image/png", pngBytes).
func Image(mimeType string, data []byte) Content {
	return Content{Kind: ContentImage, MIMEType: mimeType, Data: data}
}

// Audio is an audio part, e.g. Audio("audio/wav", wavBytes).
func Audio(mimeType string, data []byte) Content {
	return Content{Kind: ContentAudio, MIMEType: mimeType, Data: data}
}

// TextResource is an embedded resource with text contents.
func TextResource(uri, mimeType, text string) Content {
	return Content{Kind: ContentResource, URI: uri, MIMEType: mimeType, Text: text}
}

// BlobResource is an embedded resource with binary contents.
func BlobResource(uri, mimeType string, data []byte) Content {
	return Content{Kind: ContentResource, URI: uri, MIMEType: mimeType, Data: data, Blob: true}
}

// ResourceLink points at a resource without embedding it.
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Kind: ContentResourceLink, URI: uri, Name: name, MIMEType: mimeType}
}

// Rich is a successful result made of parts. Its Output is the text view:
// the text parts joined by a newline, so a client that reads only text sees
// what it always did.
func Rich(parts ...Content) Result {
	return Result{Output: TextView(parts, "\n"), Content: parts}
}

// RichFailure is Rich for a failed call.
func RichFailure(parts ...Content) Result {
	r := Rich(parts...)
	r.IsError = true
	return r
}

// TextView joins the text parts of parts with sep.
func TextView(parts []Content, sep string) string {
	n, one := 0, ""
	for _, c := range parts {
		if c.Kind == ContentText {
			n++
			one = c.Text
		}
	}
	if n <= 1 {
		return one
	}
	var b strings.Builder
	first := true
	for _, c := range parts {
		if c.Kind != ContentText {
			continue
		}
		if !first {
			b.WriteString(sep)
		}
		first = false
		b.WriteString(c.Text)
	}
	return b.String()
}

// ContentSize is the bytes all parts carry together.
func ContentSize(parts []Content) int {
	n := 0
	for _, c := range parts {
		n += c.Size()
	}
	return n
}
