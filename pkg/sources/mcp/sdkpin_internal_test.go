package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSDKVersionChecked ties lineconn.go and decode.go to the go-sdk
// version they were checked against: bumping the SDK in go.mod fails here
// until someone re-checks them (see checkedSDKVersion). The behaviour
// itself is compared with the SDK's by TestDecodeMessageMatchesSDK.
func TestSDKVersionChecked(t *testing.T) {
	t.Parallel()
	const path = "github.com/modelcontextprotocol/go-sdk"
	gomod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(gomod)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) < 2 || f[0] != path {
			continue
		}
		if f[1] != checkedSDKVersion {
			t.Fatalf("go.mod requires %s %s, but lineconn.go and decode.go were checked against %s: "+
				"re-read the SDK's stdio connection and jsonrpc.DecodeMessage, run TestDecodeMessageMatchesSDK "+
				"and FuzzDecodeMessage, then set checkedSDKVersion (sdkpin.go)", path, f[1], checkedSDKVersion)
		}
		return
	}
	t.Fatalf("go.mod does not require %s", path)
}
