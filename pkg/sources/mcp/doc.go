// Package mcp turns MCP servers into toolnexus tools, one source per server.
//
// A local server is a child process spoken to over stdio, in its own
// process group; a remote one is reached over streamable HTTP, falling back
// to the older HTTP+SSE transport. Each server's tools are published into
// its own registry layer (mcp/NAME) as NAME_TOOL, both parts sanitized, so
// one server changing or dying never disturbs another.
//
// # Config
//
// ParseConfig reads the server map as mcp.json writes it:
//
//	{
//	  "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
//	  "local":  {"type": "local", "command": ["./bin/srv", "--quiet"], "env": {"LEVEL": "2"}, "cwd": "srv"},
//	  "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
//	             "timeout": 10000, "tools": {"delete_everything": false}},
//	  "old":    {"type": "sse", "url": "https://example.test/sse"},
//	  "off":    {"command": "x", "disabled": true}
//	}
//
// type is local (also "stdio") or remote (also "http", "sse"), inferred
// from command or url when absent. command is an array, or a string plus
// args. environment (alias env) is the child's own variables: a stdio
// server inherits only PATH, HOME, LANG, LC_ALL, TERM, TZ, USER and LOGNAME
// from toolnexus, never its secrets. Relative paths
// (cwd, a command containing a slash) resolve against Env.BaseDir. headers
// and env values may reference ${VAR} or ${file:/path}: expanded at Start, a
// missing variable or file fails that server alone, and the values are
// scrubbed from every error text and stderr line. disabled:true wins over enabled. timeout (ms, default 30000)
// bounds each phase: start with initialize, then tools/list. tools is the
// filter map on the server's original tool names. restart tunes the
// self-healing backoff: {"initialBackoff": 250, "maxBackoff": 30000,
// "resetAfter": 60000} (ms, the defaults).
//
// tokenExchange (remote servers only) is {"tokenUrl", "clientId",
// "clientSecret", "audience", "scope"}: each caller's calls run on a session
// of its own, authenticated with the caller's JWT exchanged (RFC 8693) for
// one meant for the server, while the shared session lists the tools with
// the client's own token (percaller.go).
//
// sandbox (local servers only) is true, or {"network": bool, "readPaths":
// [...], "writePaths": [...]}: the child is started by toolnexus in
// Env.Sandbox (stdio.go) — read-only system paths, sandbox.readPaths and
// its own readPaths, read-write only a private temp dir (HOME, TMPDIR),
// its cwd and its writePaths, network
// as sandbox.network or its own setting — and the SDK talks to it over
// the pipes. Every local server is started that way; without the sandbox
// (or with sandbox.mode off) it simply runs unconfined.
//
// # Running
//
//	servers, warnings, err := mcp.ParseConfig(raw)
//	reg := registry.New()
//	src := mcp.New("fs", servers["fs"], sources.Env{})
//	if err := src.Start(ctx, reg); err != nil {
//		// src.Status() is failed with the reason; other servers are unaffected.
//	}
//	defer src.Close(context.Background())
//	e, _ := reg.Snapshot().Lookup("fs_read_file")
//	res := e.Tool.Execute(ctx, tool.Call{Arguments: json.RawMessage(`{"path":"a.txt"}`)})
//
// A call's result maps as follows (pinned by the tests): isError → failure with the
// text parts joined by a blank line ("MCP tool returned an error" when
// there are none); structuredContent → its JSON; otherwise the text parts
// joined by a newline. Metadata is {"server": NAME}. The caller's context
// reaches tools/call, so a cancelled call is cancelled on the server too.
//
// # Staying healthy
//
// Until Close the source keeps the server healthy: a notifications/tools/
// list_changed re-lists and republishes the tools (coalesced over 250 ms).
// When a local server dies, or a remote server forgets the session, calls
// fail at once with a failure that says the server is down, the status
// reads restarting, and the server is restarted with capped exponential
// backoff; its tools are republished when it is back. A transient HTTP
// failure (502, 503, 504, 429) fails only that call, as the SDK keeps the
// session. Close shuts the server down politely (stdin closed, HTTP session
// deleted), kills the child's whole process group, and returns once every
// goroutine it started has ended.
package mcp
