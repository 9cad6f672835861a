package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// wireMessage is every field a JSON-RPC 2.0 message can have, as the
// go-sdk decodes them. Method stays raw so that a present "method" key
// (even "") tells a request from a response.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// decodeFlags are the go-sdk's: its JSON package, and field names matched
// exactly (a "Method" key is not "method"). The raw parts of a message
// (params, result, error data) alias the line they came from, which
// readLine made for this message alone.
const decodeFlags = segjson.DontMatchCaseInsensitiveStructFields | segjson.DontCopyRawMessage

// maxMessageDepth is the go-sdk's bound on nested objects and arrays.
const maxMessageDepth = 1000

var (
	errMessageTooDeep  = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxMessageDepth)
	errInvalidResponse = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}
)

// decodeMessage is jsonrpc.DecodeMessage — the same message for every
// input, and an error for the same inputs (a syntax error is worded as the
// JSON package words it) — without its per-message cost: the go-sdk decodes each message through a
// streaming decoder over the bytes it already holds, which allocates a
// fresh 32 KB read buffer every time (the largest allocation of an MCP
// call, and most of the garbage a call makes) and then copies the raw
// parts out of it. Here the same JSON package, with the same flags, parses
// the line in place.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if err := checkDepth(data); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var msg wireMessage
	if _, err := segjson.Parse(data, &msg, decodeFlags); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if msg.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", msg.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return nil, err
	}
	if len(msg.Method) > 0 {
		var method string
		if _, err := segjson.Parse(msg.Method, &method, decodeFlags); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: msg.Params}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidResponse
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil { // not a typed nil in the error interface
		resp.Error = msg.Error
	}
	return resp, nil
}

// checkDepth refuses data nested deeper than maxMessageDepth, counting
// brackets outside strings as the go-sdk does before it decodes.
func checkDepth(data []byte) error {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxMessageDepth {
				return errMessageTooDeep
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
