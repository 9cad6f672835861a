package mcpgateway_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every gateway a test starts ends its sessions and its registry watcher
// when closed, and the core behind it its sources.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
