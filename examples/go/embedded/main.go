// Command embedded is a toolnexus server with your own Go functions served
// as tools next to everything the config declares (builtins, skills, MCP
// servers, HTTP tools, A2A agents). It takes the same flags and environment
// as toolnexus-server, because server.Main is that whole program:
//
//	go run ./examples/go/embedded --debug
//	toolnexus --addr 127.0.0.1:50051 exec unit_convert '{"value":10,"from":"km","to":"mi"}'
//
// Your tools land in the "native" layer, which beats builtins, skills, A2A
// and HTTP tools of the same name and yields only to MCP servers.
package main

import (
	"os"

	"github.com/toolnexus/toolnexus/pkg/server"
)

func main() {
	os.Exit(server.Main(os.Args[1:], tools()...))
}
