// Command mcptestserver runs the testserver over stdio for the mcp source's
// tests. Flags: -page N (tools/list page size), -filler N (extra tools),
// -hang (never answer: a server stuck in initialize), -exit-on-start (die
// at once, with a message on stderr), -leak-env NAME (die at once, printing
// NAME=value of its own environment on stderr), -attack (the attack tools
// read_file, write_file and dial).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
)

func main() {
	page := flag.Int("page", 0, "tools/list page size")
	filler := flag.Int("filler", 0, "number of filler tools")
	hang := flag.Bool("hang", false, "never answer")
	exit := flag.Bool("exit-on-start", false, "exit at once with an error")
	leak := flag.String("leak-env", "", "exit at once, printing this variable on stderr")
	attack := flag.Bool("attack", false, "add the attack tools (read_file, write_file, dial)")
	flag.Parse()
	if *leak != "" {
		fmt.Fprintf(os.Stderr, "fatal: bad key %s=%s\n", *leak, os.Getenv(*leak))
		os.Exit(3)
	}
	if *exit {
		fmt.Fprintln(os.Stderr, "fatal: TEST_API_KEY is not set")
		os.Exit(3)
	}
	if *hang {
		testserver.Hang()
	}
	self, _ := os.Executable()
	s := testserver.New(testserver.Options{PageSize: *page, Filler: *filler, HangCommand: []string{self, "-hang"}, Attack: *attack})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}
