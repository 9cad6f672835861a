package console_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Every server, provider and browser a test starts ends with it; the one
// browser of the binary (browser_test.go) ends before the leak check.
func TestMain(m *testing.M) {
	code := m.Run()
	closeBrowser()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// closeBrowser is replaced by browser_test.go.
var closeBrowser = func() {}
