// Package codemode runs a run_code script: a short JavaScript program
// (interpreted by goja) that calls tools as functions. The interpreter runs
// in a child process — the server's own binary re-executed, in the sandbox
// bash's commands run in (Limits.Sandbox) — under an address-space limit
// and a deadline, so a hostile script can exhaust only that child; a Pool
// caps the children running at once, in total and per principal. The
// child has no file or network API; its only way out is the tools object,
// whose calls travel as JSON lines to the server, which runs each through
// its ordinary call path.
package codemode
