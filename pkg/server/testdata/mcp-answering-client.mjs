// An MCP client on the official TypeScript SDK that answers the server's
// elicitation and sampling requests, for the Go tests of the gateway's relay.
//
//   node mcp-answering-client.mjs NODE_DIR URL
//
// It declares both capabilities, answers every elicitation/create by
// accepting {"name": "Dorothy Vaughan"} and every sampling/createMessage
// with the text "sampled by the TypeScript client", calls
// everything_trigger-elicitation-request and everything_trigger-sampling-request
// and prints one JSON line: {"elicitation": CallToolResult, "sampling":
// CallToolResult, "asked": [methods the server sent]}.

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir, url] = process.argv.slice(2);
const require = createRequire(join(nodeDir, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const asked = [];
const client = new Client({ name: 'toolnexus-e2e-ts-answering', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(`elicitation: ${req.params.message}`);
  return { action: 'accept', content: { name: 'Dorothy Vaughan' } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  asked.push(`sampling: ${req.params.messages.at(-1).content.text}`);
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
