// An MCP client on the official TypeScript SDK that answers the server's
// elicitation and sampling requests, for the Go tests of the gateway's relay.
//
//   node mcp-answering-client.mjs NODE_DIR URL [MODE]
//
// It declares both capabilities, calls everything_trigger-elicitation-request
// and everything_trigger-sampling-request and prints one JSON line:
// {"elicitation": CallToolResult, "sampling": CallToolResult, "asked":
// [methods the server sent]}. MODE says how it answers:
//
//   answer   (default) accept {"name": "Dorothy Vaughan"}; the completion
//            "sampled by the TypeScript client"
//   decline  decline the elicitation; refuse the sampling request with an
//            error, as a client whose user said no
//   silent   never answer: wait until the server withdraws the request
//            (notifications/cancelled, when limits.pendingTimeout passes),
//            then record "cancelled: METHOD" in asked

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir, url, mode = 'answer'] = process.argv.slice(2);
const require = createRequire(join(nodeDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema, McpError } = require('@modelcontextprotocol/sdk/types.js');

const asked = [];
// silence waits for the request's abort signal, then fails the handler
// (its answer goes nowhere: the request was cancelled).
const silence = (method, signal) => new Promise((_, reject) => {
  signal.addEventListener('abort', () => {
    asked.push(`cancelled: ${method}`);
    reject(new Error('cancelled'));
  });
});
const client = new Client({ name: 'toolnexus-e2e-ts-answering', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
  asked.push(`elicitation: ${req.params.message}`);
  if (mode === 'silent') await silence('elicitation/create', extra.signal);
  if (mode === 'decline') return { action: 'decline' };
  return { action: 'accept', content: { name: 'Dorothy Vaughan' } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
  asked.push(`sampling: ${req.params.messages.at(-1).content.text}`);
  if (mode === 'silent') await silence('sampling/createMessage', extra.signal);
  if (mode === 'decline') throw new McpError(-1, 'the user refused the sampling request');
  return { role: 'assistant', model: 'ts-model', content: { type: 'text', text: 'sampled by the TypeScript client' } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
  await client.connect(transport);
  const elicitation = await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} });
  const sampling = await client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'from ts' } });
  console.log(JSON.stringify({ elicitation, sampling, asked }));
  await client.close();
} catch (err) {
  console.error(String(err && err.stack ? err.stack : err));
  try { await client.close(); } catch { /* already failed */ }
  process.exit(1);
}
