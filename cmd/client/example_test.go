package main

import (
	"fmt"
	"os"
)

// The CLI against a server with the debug tools: execute one, then list them.
func Example() {
	dir, err := os.MkdirTemp("", "toolnexus-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	srv, stop, err := serve(dir, debugOnly)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	addr := srv.Addr().String()

	code := run([]string{"--addr", addr, "exec", "debug_echo", "--args", `{"greeting":"hello"}`}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
	code = run([]string{"--addr", addr, "exec", "debug_fail", "--args", `{"message":"no"}`}, os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	run([]string{"--addr", addr, "list", "--source", "debug"}, os.Stdout, os.Stderr)
	// Output:
	// {"greeting":"hello"}
	// exit 0
	// no
	// exit 1
	// NAME         SOURCE  DESCRIPTION
	// debug_echo   debug   Return the arguments as compact JSON. For smoke tests and benchmarks.
	// debug_fail   debug   Fail with the given message.
	// debug_panic  debug   Panic with the given message, to drill panic containment.
	// debug_sleep  debug   Wait ms milliseconds, then return. Stops at once when the call is cance…
}
