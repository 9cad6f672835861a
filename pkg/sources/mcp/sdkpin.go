package mcp

// checkedSDKVersion is the go-sdk release whose stdio connection and
// jsonrpc.DecodeMessage lineconn.go and decode.go were last compared with.
// They re-implement the SDK's reading of a local server's pipe (one message
// a line, its line bound, its decoding rules and errors) for speed, so an
// SDK upgrade may change what they must do. TestSDKVersionChecked fails
// until this constant names the version go.mod requires; change it only
// after re-reading the SDK's IOTransport and DecodeMessage for the new
// version and running TestDecodeMessageMatchesSDK and FuzzDecodeMessage.
// docs/upstream/go-sdk-stdio-decode.md proposes the change that would let
// both files go.
const checkedSDKVersion = "v1.8.0"
