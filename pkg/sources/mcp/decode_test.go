package mcp

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeCorpus covers every branch of a JSON-RPC message's decoding:
// requests, notifications and responses, every id form, errors, the
// version tag, exact key matching, depth, and malformed input.
var decodeCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"method":"","params":[]}`,
	`{"jsonrpc":"2.0","id":7,"method":"t\u00e9l\u00e9\"x\""}`,
	`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":2,"result":null}`,
	`{"jsonrpc":"2.0","id":2}`,
	`{"jsonrpc":"2.0","id":"s-1","error":{"code":-32602,"message":"bad params","data":{"why":"x"}}}`,
	`{"jsonrpc":"2.0","id":3,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
	`{"JSONRPC":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
	`{"jsonrpc":"2.0","id":1,"result":{}`,
	`{"jsonrpc":"2.0","id":1,"result":{"s":"[[[[{{{{"}}`,
	`[]`,
	`"just a string"`,
	``,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":"\\\"[["}}`,
}

// TestDecodeMessageMatchesSDK shows decodeMessage gives the go-sdk's
// messages and errors for every input of the corpus.
func TestDecodeMessageMatchesSDK(t *testing.T) {
	for _, in := range decodeCorpus {
		sameAsSDK(t, []byte(in))
	}
}

// FuzzDecodeMessage looks for an input the two decode differently.
func FuzzDecodeMessage(f *testing.F) {
	for _, in := range decodeCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { sameAsSDK(t, in) })
}

func sameAsSDK(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := jsonrpc.DecodeMessage(bytes.Clone(in))
	got, gotErr := decodeMessage(bytes.Clone(in))
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: go-sdk error %v, ours %v", in, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q:\ngo-sdk %#v\nours   %#v", in, want, got)
	}
}
