package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// wireText and wireBlob keep a string as sent only when a JSON decoder
// takes it, and count the bytes it decodes to exactly.
func FuzzWireText(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\" \\ \/ \u00e9 \ud83d\ude00"`, `"lone \ud800 x"`, `"\ud800\u0041"`, "\"raw\nbreak\"", `"bad \x"`,
		"\"\xff\xfe\"", `"end\"`, `"\u12"`, `"é😀"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := wireText([]byte(s))
		var dec string
		err := json.Unmarshal([]byte(s), &dec)
		if ok && (err != nil || n != len(dec)) {
			t.Fatalf("wireText(%q) = %d, true; json decodes %d bytes, %v", s, n, len(dec), err)
		}
		if !ok && err == nil && len(s) > 0 && s[0] == '"' && !bytes.ContainsAny([]byte(s), "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f") &&
			stringEnd([]byte(s), 0) == len(s) && json.Valid([]byte(s)) && isUTF8(s) {
			t.Fatalf("wireText(%q) refused a string json decodes to %q", s, dec)
		}
		if bn, ok := wireBlob([]byte(s)); ok {
			var b []byte
			if err := json.Unmarshal([]byte(s), &b); err != nil || bn != len(b) {
				t.Fatalf("wireBlob(%q) = %d, true; json decodes %d bytes, %v", s, bn, len(b), err)
			}
		}
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// wireParts keeps the parts of a plain answer as sent and leaves anything
// else to the SDK's decoding.
func TestWireParts(t *testing.T) {
	for _, tc := range []struct {
		result     string
		parts      int
		needsInput bool
		ok         bool
	}{
		{`{"contents":[{"uri":"a","mimeType":"text/plain","text":"hi","_meta":{"x":[1,{"y":null}]}},{"uri":"b","blob":"AAE="}],"_meta":{}}`, 2, false, true},
		{` { "contents" : [ null , {"uri":"a","text":null,"blob":"AA=="} ] } `, 1, false, true},
		{`{"contents":null}`, 0, false, true},
		{`{"resultType":"input_required","inputRequests":{"a":{}}}`, 0, true, true},
		{`{"contents":[{"uri":"b","blob":"AA\u003d="}]}`, 0, false, false},      // escapes in a blob
		{`{"contents":[{"uri":"b","text":"a` + "\n" + `b"}]}`, 0, false, false}, // a raw line break
		{`{"contents":[{"uri":1,"text":"x"}]}`, 0, false, false},
		{`{"contents":{}}`, 0, false, false},
		{`{"contents":[]`, 0, false, false},
		{`{"contents":[]} x`, 0, false, false},
	} {
		parts, needsInput, ok := wireParts([]byte(tc.result))
		if ok != tc.ok || needsInput != tc.needsInput || ok && len(parts) != tc.parts {
			t.Errorf("wireParts(%s) = %d parts, %v, %v; want %d, %v, %v", tc.result, len(parts), needsInput, ok, tc.parts, tc.needsInput, tc.ok)
		}
	}
	parts, _, _ := wireParts([]byte(`{"contents":[{"uri":"a","mimeType":"m","text":"h\u00e9"},{"uri":"b","blob":"AAE="}]}`))
	if p := parts[0]; p.URI != "a" || p.MIMEType != "m" || string(p.Wire) != `"h\u00e9"` || p.WireSize != 3 || p.Blob {
		t.Errorf("text part = %+v", p)
	}
	if p := parts[1]; !p.Blob || string(p.Wire) != `"AAE="` || p.WireSize != 2 {
		t.Errorf("blob part = %+v", p)
	}
}

// rawBody hands the SDK a stand-in for the read's answer, however the
// body arrives, and every other message and event as it is.
func TestRawBodyReplacesTheAnswer(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"x","blob":"AAE="}]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	other := `{"jsonrpc":"2.0","id":8,"result":{"contents":[]}}`
	stand := `{"jsonrpc":"2.0","id":7,"result":{"contents":[]}}`
	for _, tc := range []struct {
		name, body, want string
		sse              bool
		kept             string
	}{
		{"sse", "event: message\nid: 1\ndata: " + note + "\n\nid: 2\r\ndata: " + answer + "\r\n\r\n: after\n\n", "event: message\nid: 1\ndata: " + note + "\n\nid: 2\ndata: " + stand + "\n\n: after\n\n", true, answer[strings.Index(answer, `{"contents"`) : len(answer)-1]},
		{"sse, another id", "data: " + other + "\n\n", "data: " + other + "\n\n", true, ""},
		{"json", answer, stand, false, answer[strings.Index(answer, `{"contents"`) : len(answer)-1]},
		{"json, an error", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := &rawRead{}
			b := &rawBody{src: io.NopCloser(iotest.HalfReader(strings.NewReader(tc.body))), rr: rr, id: float64(7), sse: tc.sse}
			got, err := io.ReadAll(iotest.OneByteReader(b))
			if err != nil || string(got) != tc.want {
				t.Errorf("the SDK read %q, %v; want %q", got, err, tc.want)
			}
			if string(rr.get()) != tc.kept {
				t.Errorf("kept %q, want %q", rr.get(), tc.kept)
			}
		})
	}
}

// Only the read's own POST is captured.
func TestCaptureReadOnlyTheRead(t *testing.T) {
	rr := &rawRead{}
	ctx := withRawRead(context.Background(), rr)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}}
	body := io.NopCloser(strings.NewReader(""))
	for method, want := range map[string]bool{"resources/read": true, "tools/call": false} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{}}`))
		if _, got := captureRead(ctx, req, resp, body).(*rawBody); got != want {
			t.Errorf("%s captured: %v, want %v", method, got, want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://x/", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"resources/read"}`))
	if _, got := captureRead(context.Background(), req, resp, body).(*rawBody); got {
		t.Error("a read without a rawRead in its context was captured")
	}
}
