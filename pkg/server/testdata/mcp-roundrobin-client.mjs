// An MCP client on the official TypeScript SDK for the shared-sessions
// test: it initializes once, then calls TOOL N times with {} and an
// onprogress callback (so each request carries a progress token), through
// whatever sits at URL (a round-robin proxy over several replicas).
//
//   node mcp-roundrobin-client.mjs NODE_DIR URL TOOL N
//
// It prints one JSON line:
//   {"sessionId": "...", "calls": [{"text": "...", "isError": false, "progress": [p, ...]}]}
// Any failure exits 1 with the error on stderr.

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir, url, toolName, count] = process.argv.slice(2);
if (!nodeDir || !url || !toolName || !count) {
  console.error('usage: node mcp-roundrobin-client.mjs NODE_DIR URL TOOL N');
  process.exit(2);
}
const require = createRequire(join(nodeDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const client = new Client({ name: 'toolnexus-e2e-ts-roundrobin', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
  await client.connect(transport);
  const calls = [];
  for (let i = 0; i < Number(count); i++) {
    const progress = [];
    const result = await client.callTool({ name: toolName, arguments: {} }, undefined, {
      onprogress: (p) => { progress.push(p.progress); },
    });
    calls.push({ text: result.content.map((c) => c.text).join(''), isError: !!result.isError, progress });
  }
  console.log(JSON.stringify({ sessionId: transport.sessionId, calls }));
  await client.close();
} catch (err) {
  console.error(String(err && err.stack ? err.stack : err));
  try { await client.close(); } catch { /* already failed */ }
  process.exit(1);
}
