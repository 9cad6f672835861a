// An MCP client built on the official TypeScript SDK, for the Go tests of
// the gateway: a third-party client speaking to /mcp exactly as an agent
// would.
//
//   TOOLNEXUS_TOKEN=... node mcp-client.mjs NODE_DIR URL TOOL ARGS_JSON
//
// NODE_DIR is e2e/node (its node_modules holds @modelcontextprotocol/sdk).
// It connects over streamable HTTP (sending "Authorization: Bearer TOKEN"
// when TOOLNEXUS_TOKEN is set), lists every tool (following nextCursor),
// calls TOOL with ARGS_JSON and prints one JSON line:
//   {"server": {...serverInfo}, "tools": [names in list order], "result": {...CallToolResult}}
// Any failure exits 1 with the error on stderr.

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir, url, toolName, argsJSON] = process.argv.slice(2);
if (!nodeDir || !url || !toolName) {
  console.error('usage: node mcp-client.mjs NODE_DIR URL TOOL [ARGS_JSON]');
  process.exit(2);
}
// Resolve the SDK from e2e/node, not from this file's directory.
const require = createRequire(join(nodeDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const headers = {};
if (process.env.TOOLNEXUS_TOKEN) {
  headers.Authorization = `Bearer ${process.env.TOOLNEXUS_TOKEN}`;
}

const client = new Client({ name: 'toolnexus-e2e-ts', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const t of page.tools) tools.push(t.name);
    cursor = page.nextCursor;
  } while (cursor);
  const result = await client.callTool({ name: toolName, arguments: JSON.parse(argsJSON || '{}') });
  console.log(JSON.stringify({ server: client.getServerVersion(), tools, result }));
  await client.close();
} catch (err) {
  console.error(String(err && err.stack ? err.stack : err));
  try { await client.close(); } catch { /* already failed */ }
  process.exit(1);
}
