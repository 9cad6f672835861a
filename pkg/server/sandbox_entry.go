package server

import (
	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// EnterSandboxHelper makes this process the command sandbox's helper when
// the server started it as one, and then never returns; otherwise it
// returns at once.
//
// The sandbox starts its helper (the process that forks every confined
// command) by re-executing the running program, so a program that serves
// sandboxed commands calls EnterSandboxHelper first in main, before it
// parses flags, logs or starts goroutines. Main does. A program that
// builds its server with New calls it itself, and so does the TestMain of
// a test package that starts one; without the call, New refuses to start
// with sandbox.mode auto or required, naming this function, rather than
// run commands less confined.
func EnterSandboxHelper() {
	codemode.EnterChild()
	sandbox.EnterHelper()
}
