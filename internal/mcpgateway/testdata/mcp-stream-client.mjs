// An MCP client on the official TypeScript SDK that records, in the order
// they arrive, the progress and log notifications of each call and then its
// result — for the Go tests of the gateway's streaming.
//
//   node mcp-stream-client.mjs NODE_DIR URL LEVEL TOOL...
//
// It connects over streamable HTTP, sends logging/setLevel LEVEL (unless
// LEVEL is "none"), calls each TOOL with {} and an onprogress callback (so
// the request carries a progress token), and prints one JSON line:
//   {"calls": [{"tool": NAME, "events": [{"progress": {...}} | {"log": {...}} | {"result": {...}}]}]}
// Any failure exits 1 with the error on stderr.

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir, url, level, ...toolNames] = process.argv.slice(2);
if (!nodeDir || !url || !level || toolNames.length === 0) {
  console.error('usage: node mcp-stream-client.mjs NODE_DIR URL LEVEL TOOL...');
  process.exit(2);
}
const require = createRequire(join(nodeDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { LoggingMessageNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const client = new Client({ name: 'toolnexus-e2e-ts-stream', version: '1.0.0' });
let events = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { events.push({ log: n.params }); });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
  await client.connect(transport);
  if (level !== 'none') await client.setLoggingLevel(level);
  const calls = [];
  for (const name of toolNames) {
    events = [];
    const result = await client.callTool({ name, arguments: {} }, undefined, {
      onprogress: (p) => { events.push({ progress: p }); },
    });
    events.push({ result });
    calls.push({ tool: name, events });
  }
  console.log(JSON.stringify({ calls }));
  await client.close();
} catch (err) {
  console.error(String(err && err.stack ? err.stack : err));
  try { await client.close(); } catch { /* already failed */ }
  process.exit(1);
}
