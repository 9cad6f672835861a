// An MCP server on the official TypeScript SDK (stdio) with the tools the
// MCP conformance suite's server scenarios call, written from each
// scenario's "Server Implementation Requirements" — for running the suite
// through toolnexus's /mcp with this server behind it.
//
//   node conformance-upstream.mjs NODE_DIR
//
//   test_elicitation                  tools-call-elicitation
//   test_sampling                     tools-call-sampling
//   test_elicitation_sep1034_defaults elicitation-sep1034-defaults
//   test_elicitation_sep1330_enums    elicitation-sep1330-enums
//   json_schema_2020_12_tool          json-schema-2020-12

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [nodeDir] = process.argv.slice(2);
const require = createRequire(join(nodeDir, 'package.json'));
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const {
  CallToolRequestSchema, ListToolsRequestSchema, ElicitResultSchema, CreateMessageResultSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const noArgs = { type: 'object', properties: {}, required: [] };
const tools = [
  {
    name: 'test_elicitation', description: 'Asks the user for a username and an email.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  {
    name: 'test_sampling', description: "Asks the client's model to complete a prompt.",
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  { name: 'test_elicitation_sep1034_defaults', description: 'Elicitation whose fields carry defaults.', inputSchema: noArgs },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicitation with every enum form.', inputSchema: noArgs },
  {
    name: 'json_schema_2020_12_tool', description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
];

const sep1034 = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
};

const sep1330 = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }],
    },
    legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] },
    },
  },
};

const server = new Server({ name: 'conformance-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const elicit = (params) => server.request({ method: 'elicitation/create', params }, ElicitResultSchema);

server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const args = req.params.arguments ?? {};
  switch (req.params.name) {
    case 'test_elicitation': {
      const r = await elicit({
        message: args.message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'test_sampling': {
      const r = await server.request({
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }], maxTokens: 100 },
      }, CreateMessageResultSchema);
      return text(`LLM response: ${r.content.type === 'text' ? r.content.text : JSON.stringify(r.content)}`);
    }
    case 'test_elicitation_sep1034_defaults': {
      const r = await elicit({ message: 'Please review your profile (defaults filled in)', requestedSchema: sep1034 });
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'test_elicitation_sep1330_enums': {
      const r = await elicit({ message: 'Pick your options', requestedSchema: sep1330 });
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case 'json_schema_2020_12_tool':
      return text(`Hello ${args.name ?? 'nobody'}`);
  }
  return { isError: true, ...text(`unknown tool ${req.params.name}`) };
});

await server.connect(new StdioServerTransport());
