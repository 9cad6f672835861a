// An MCP server on the official TypeScript SDK (stdio), for the Go tests of
// rich results and streaming: its tools return image, audio, resource and
// mixed content, report progress and log messages, fail, and wait to be
// cancelled.
//
//   node rich-server.mjs
//
// Tools:
//   image     one PNG image part
//   audio     one WAV audio part
//   resource  a text resource and a blob resource
//   mixed     text, image, resource link and text resource, in that order
//   report    3 notifications/progress (for the request's progress token)
//             and 3 notifications/message, then the text "reported"
//   fail      an isError result
//   slow      waits until the client cancels it
//   cancelled how many slow calls were cancelled (as text)

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

// A 1x1 PNG and a tiny WAV header: real media types, small bytes.
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const WAV = Buffer.from('RIFF$\u0000\u0000\u0000WAVEfmt ').toString('base64');
export const BLOB = Buffer.from([0, 1, 2, 255]).toString('base64');

const server = new Server(
  { name: 'toolnexus-rich-server', version: '1.0.0' },
  { capabilities: { tools: {}, logging: {} } },
);

const object = { type: 'object', properties: {} };
const tools = ['image', 'audio', 'resource', 'mixed', 'report', 'fail', 'slow', 'cancelled'].map((name) => ({
  name, description: `The ${name} tool of the rich test server.`, inputSchema: object,
}));

let cancelled = 0;

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  switch (request.params.name) {
    case 'image':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'audio':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'resource':
      return {
        content: [
          { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
          { type: 'resource', resource: { uri: 'file:///data.bin', mimeType: 'application/octet-stream', blob: BLOB } },
        ],
      };
    case 'mixed':
      return {
        content: [
          { type: 'text', text: 'here is the chart' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///chart.csv', name: 'chart.csv', mimeType: 'text/csv' },
          { type: 'resource', resource: { uri: 'file:///chart.md', mimeType: 'text/markdown', text: 'chart notes' } },
        ],
      };
    case 'report': {
      const token = request.params._meta?.progressToken;
      for (let i = 1; i <= 3; i++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: 3, message: `step ${i}` },
          });
        }
        await server.sendLoggingMessage({ level: i === 3 ? 'warning' : 'info', logger: 'report', data: { step: i } });
      }
      return { content: [{ type: 'text', text: 'reported' }] };
    }
    case 'fail':
      return { content: [{ type: 'text', text: 'the rich server failed on purpose' }], isError: true };
    case 'slow':
      await new Promise((resolve) => {
        if (extra.signal.aborted) resolve();
        extra.signal.addEventListener('abort', () => { cancelled++; resolve(); });
      });
      return { content: [{ type: 'text', text: 'cancelled' }] };
    case 'cancelled':
      return { content: [{ type: 'text', text: String(cancelled) }] };
    default:
      return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
