// The upstream MCP server behind toolnexus in the conformance test: each
// tool, resource, template and prompt does what the conformance suite's
// server scenario of the same name asks of a server (the names, URIs and
// texts are the suite's), written on the official TypeScript SDK and served
// over stdio. toolnexus lists them under their own names (prefix "") and
// serves them at /mcp, where the suite's client uses them; what the suite
// checks is then what a client sees through toolnexus.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  ElicitResultSchema,
  CreateMessageResultSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  ListPromptsRequestSchema,
  GetPromptRequestSchema,
  CompleteRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

// A 1x1 PNG and a 44-byte silent WAV: the smallest valid media.
const png =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const wav = Buffer.concat([
  Buffer.from("RIFF"), Buffer.from([36, 0, 0, 0]), Buffer.from("WAVEfmt "),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0]),
  Buffer.from("data"), Buffer.from([0, 0, 0, 0]),
]).toString("base64");

const noArgs = { type: "object", properties: {} };
const tools = [
  { name: "test_simple_text", description: "Returns simple text", inputSchema: noArgs },
  { name: "test_image_content", description: "Returns an image", inputSchema: noArgs },
  { name: "test_audio_content", description: "Returns audio", inputSchema: noArgs },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: noArgs },
  { name: "test_multiple_content_types", description: "Returns text, an image and a resource", inputSchema: noArgs },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs", inputSchema: noArgs },
  { name: "test_tool_with_progress", description: "Reports progress while it runs", inputSchema: noArgs },
  { name: "test_error_handling", description: "Always fails", inputSchema: noArgs },
  // server-sse-polling calls it expecting the server to close the POST's stream
  // mid-call; over stdio there is no stream to close, so it just answers, on the
  // gateway's stream to the suite.
  { name: "test_reconnection", description: "Answers the SSE polling scenario's call", inputSchema: noArgs },
  {
    name: "test_sampling", description: "Asks the client's model for a completion",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation", description: "Asks the user for input",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  { name: "test_elicitation_sep1034_defaults", description: "Elicitation with defaults (SEP-1034)", inputSchema: noArgs },
  { name: "test_elicitation_sep1330_enums", description: "Elicitation with every enum form (SEP-1330)", inputSchema: noArgs },
  // server-stateless (2026-07-28) diagnostics
  { name: "test_missing_capability", description: "Needs the client's sampling capability", inputSchema: noArgs },
  { name: "test_streaming_elicitation", description: "Reports progress, then returns", inputSchema: noArgs },
  { name: "test_logging_tool", description: "Logs a message, then returns", inputSchema: noArgs },
  { name: "test_trigger_tool_change", description: "Adds or removes a tool", inputSchema: noArgs },
  { name: "test_trigger_prompt_change", description: "Adds or removes a prompt", inputSchema: noArgs },
  // http-custom-header-server-validation (2026-07-28): a parameter the client also sends as a header
  {
    name: "test_custom_headers", description: "Echoes a parameter mirrored in the Mcp-Param-Region header",
    inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } }, required: ["region"] },
  },
  {
    name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { $anchor: "addressDef", type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: {
        name: { type: "string" }, address: { $ref: "#/$defs/address" },
        contactMethod: { type: "string", enum: ["phone", "email"] }, phone: { type: "string" }, email: { type: "string" },
      },
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      then: { required: ["phone"] },
      else: { required: ["email"] },
      additionalProperties: false,
    },
  },
];

const server = new Server(
  { name: "toolnexus-conformance-upstream", version: "1.0.0" },
  {
    capabilities: {
      tools: { listChanged: true }, logging: {}, resources: { subscribe: true }, prompts: { listChanged: true }, completions: {},
    },
  },
);
const text = (t) => ({ content: [{ type: "text", text: t }] });
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

async function elicit(params) {
  const r = await server.request({ method: "elicitation/create", params }, ElicitResultSchema);
  return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
}

const handlers = {
  test_simple_text: () => text("This is a simple text response for testing."),
  test_reconnection: () => text("Reconnection test completed"),
  test_image_content: () => ({ content: [{ type: "image", data: png, mimeType: "image/png" }] }),
  test_audio_content: () => ({ content: [{ type: "audio", data: wav, mimeType: "audio/wav" }] }),
  test_embedded_resource: () => ({
    content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }],
  }),
  test_multiple_content_types: () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: png, mimeType: "image/png" },
      { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' } },
    ],
  }),
  test_tool_with_logging: async () => {
    for (const [i, data] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
      if (i > 0) await pause(50);
      await server.sendLoggingMessage({ level: "info", data });
    }
    return text("Tool with logging executed successfully");
  },
  test_tool_with_progress: async (_args, extra) => {
    const token = extra._meta?.progressToken;
    for (const [i, progress] of [0, 50, 100].entries()) {
      if (i > 0) await pause(50);
      if (token !== undefined) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
      }
    }
    return text("Tool with progress executed successfully");
  },
  test_error_handling: () => ({ isError: true, ...text("This tool intentionally returns an error for testing") }),
  test_sampling: async (args) => {
    const r = await server.request(
      { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: args.prompt } }], maxTokens: 100 } },
      CreateMessageResultSchema,
    );
    return text(`LLM response: ${r.content?.text ?? JSON.stringify(r.content)}`);
  },
  test_elicitation: async (args) => {
    const r = await server.request({
      method: "elicitation/create",
      params: {
        message: args.message,
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      },
    }, ElicitResultSchema);
    return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  },
  test_elicitation_sep1034_defaults: () => elicit({
    message: "Please review and update the form fields with defaults",
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "User name", default: "John Doe" },
        age: { type: "integer", description: "User age", default: 30 },
        score: { type: "number", description: "User score", default: 95.5 },
        status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", description: "Verification status", default: true },
      },
    },
  }),
  test_elicitation_sep1330_enums: () => elicit({
    message: "Please select options from the enum fields",
    requestedSchema: {
      type: "object",
      properties: {
        untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
        titledSingle: {
          type: "string",
          oneOf: [{ const: "value1", title: "First Option" }, { const: "value2", title: "Second Option" }, { const: "value3", title: "Third Option" }],
        },
        legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
        untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: {
          type: "array",
          items: { anyOf: [{ const: "value1", title: "First Choice" }, { const: "value2", title: "Second Choice" }, { const: "value3", title: "Third Choice" }] },
        },
      },
    },
  }),
  json_schema_2020_12_tool: (args) => text(`Received: ${JSON.stringify(args)}`),
  test_missing_capability: async () => {
    const r = await server.request(
      { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: "ping" } }], maxTokens: 10 } },
      CreateMessageResultSchema,
    );
    return text(`Success: ${r.content?.text ?? ""}`);
  },
  test_streaming_elicitation: async (_args, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 50, total: 100 } });
    }
    return text("Streaming complete");
  },
  test_custom_headers: (args) => text(`Region: ${args.region}`),
  test_logging_tool: async () => {
    await server.sendLoggingMessage({ level: "info", data: "Diagnostic trace logging activated" });
    return text("Logging evaluated");
  },
  test_trigger_tool_change: async () => {
    toggle(tools, { name: "test_dynamic_tool", description: "Comes and goes", inputSchema: noArgs });
    await server.sendToolListChanged();
    return text("Mutation triggered");
  },
  test_trigger_prompt_change: async () => {
    toggle(prompts, { name: "test_dynamic_prompt", description: "Comes and goes" });
    promptHandlers.test_dynamic_prompt = () => [user({ type: "text", text: "dynamic" })];
    await server.sendPromptListChanged();
    return text("Mutation triggered");
  },
};

// toggle adds item to list, or takes it out when it is there.
function toggle(list, item) {
  const i = list.findIndex((x) => x.name === item.name);
  if (i >= 0) list.splice(i, 1);
  else list.push(item);
}

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const handle = handlers[req.params.name];
  if (!handle) return { isError: true, ...text(`unknown tool ${req.params.name}`) };
  return handle(req.params.arguments ?? {}, extra);
});

const resources = [
  { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
];
const readers = {
  "test://static-text": () => ({ mimeType: "text/plain", text: "This is the content of the static text resource." }),
  "test://static-binary": () => ({ mimeType: "image/png", blob: png }),
  "test://watched-resource": () => ({ mimeType: "text/plain", text: "Watched resource content" }),
};
const template = /^test:\/\/template\/([^/]+)\/data$/;
server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  const uri = req.params.uri;
  const m = template.exec(uri);
  if (m) {
    const text = JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` });
    return { contents: [{ uri, mimeType: "application/json", text }] };
  }
  if (!readers[uri]) throw new McpError(-32002, "Resource not found", { uri });
  return { contents: [{ uri, ...readers[uri]() }] };
});
const subscribed = new Set();
server.setRequestHandler(SubscribeRequestSchema, async (req) => (subscribed.add(req.params.uri), {}));
server.setRequestHandler(UnsubscribeRequestSchema, async (req) => (subscribed.delete(req.params.uri), {}));

const prompts = [
  { name: "test_simple_prompt", description: "A prompt without arguments" },
  {
    name: "test_prompt_with_arguments", description: "A prompt with two arguments",
    arguments: [{ name: "arg1", description: "First test argument", required: true }, { name: "arg2", description: "Second test argument", required: true }],
  },
  {
    name: "test_prompt_with_embedded_resource", description: "A prompt embedding a resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image" },
];
const user = (content) => ({ role: "user", content });
const promptHandlers = {
  test_simple_prompt: () => [user({ type: "text", text: "This is a simple prompt for testing." })],
  test_prompt_with_arguments: (a) => [user({ type: "text", text: `Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'` })],
  test_prompt_with_embedded_resource: (a) => [
    user({ type: "resource", resource: { uri: a.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
    user({ type: "text", text: "Please process the embedded resource above." }),
  ],
  test_prompt_with_image: () => [
    user({ type: "image", data: png, mimeType: "image/png" }),
    user({ type: "text", text: "Please analyze the image above." }),
  ],
};
server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts }));
server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  const handle = promptHandlers[req.params.name];
  if (!handle) throw new McpError(-32602, `unknown prompt ${req.params.name}`);
  return { messages: handle(req.params.arguments ?? {}) };
});
server.setRequestHandler(CompleteRequestSchema, async (req) => {
  const values = ["test-one", "test-two", "other"].filter((v) => v.startsWith(req.params.argument.value));
  return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
