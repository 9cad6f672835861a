// Package mcp turns MCP servers into toolnexus tools, one source per server.
//
// A local server is a child process spoken to over stdio; a remote one is
// reached over streamable HTTP, falling back to the older HTTP+SSE
// transport. Each server's tools are published into its own registry layer
// (mcp/NAME) as NAME_TOOL (both parts sanitized), so one server changing or
// dying never disturbs another.
//
// Parse the server map from the config, make a source per server and start
// it against a registry:
//
//	servers, warnings, err := mcp.ParseConfig(raw)
//	reg := registry.New()
//	src := mcp.New("fs", servers["fs"], sources.Env{})
//	if err := src.Start(ctx, reg); err != nil {
//		// src.Status() is failed with the reason; other servers are unaffected.
//	}
//	defer src.Close()
//	res := reg.Execute(ctx, "fs_read_file", tool.Call{Arguments: json.RawMessage(`{"path":"a.txt"}`)})
//
// The source keeps the server healthy until Close: a notifications/tools/
// list_changed re-lists and republishes the tools, and a server that dies
// (or a remote session that drops) is restarted with capped exponential
// backoff while calls to it fail at once with a "down" message and its
// status reads restarting.
package mcp
