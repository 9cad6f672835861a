// Command toolnexus-server serves every configured tool source over gRPC.
// Run it with --help for the flags; see the README for the config file.
package main

import (
	"os"

	"github.com/toolnexus/toolnexus/pkg/server"
)

func main() {
	// First: the sandbox re-executes this program as its helper.
	server.EnterSandboxHelper()
	os.Exit(server.Main(os.Args[1:]))
}
