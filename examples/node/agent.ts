// An agent's side of toolnexus, in TypeScript over gRPC: list the tools,
// export them in the shape OpenAI's chat API takes, then execute the tool
// call a model made with ExecuteStream (printing its live output, progress
// and logs) and turn the result into the "tool" message that goes
// back to the model. No LLM is involved: the model's tool call is replayed
// from a fixed value (or from the command line), so the script runs anywhere.
//
//   npx tsx agent.ts [ADDR] [TOOL ARGS_JSON]
//
// ADDR defaults to $TOOLNEXUS_ADDR, then 127.0.0.1:50051. $TOOLNEXUS_TOKEN,
// when set, is sent as a bearer token. A call that suspends (OUTCOME_PENDING)
// is resumed with $TOOLNEXUS_ANSWER (a JSON value) when it is set. Exit codes: 0 the call succeeded,
// 1 the tool reported a failure (is_error), 2 the server could not be used.

import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ExportFormat, OutputStream, RegistryService } from "./gen/toolnexus/v1/registry_service_pb.js";
import { Outcome, type Tool, type ToolResult } from "./gen/toolnexus/v1/tool_pb.js";

/** A tool call as an OpenAI chat completion returns it in message.tool_calls. */
interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const [addrArg, toolArg, argsArg] = process.argv.slice(2);
const addr = addrArg || process.env.TOOLNEXUS_ADDR || "127.0.0.1:50051";
const token = process.env.TOOLNEXUS_TOKEN;

// The bearer token rides on every call. Never print it.
const interceptors: Interceptor[] = [];
if (token) {
  interceptors.push((next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  });
}

// gRPC over HTTP/2 (Connect's gRPC transport always speaks HTTP/2); plain
// text here, https:// plus nodeOptions for TLS.
const transport = createGrpcTransport({ baseUrl: `http://${addr}`, interceptors });
const registry = createClient(RegistryService, transport);

/** Every tool the caller may use, following next_page_token to the end. */
async function listTools(): Promise<{ tools: Tool[]; revision: bigint }> {
  const tools: Tool[] = [];
  let pageToken = "";
  let revision = 0n;
  do {
    const page = await registry.listTools({ pageToken }, { timeoutMs: 10_000 });
    tools.push(...page.tools);
    revision = page.revision;
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return { tools, revision };
}

/**
 * The call the model "made". debug_echo when the server has the debug tools,
 * otherwise the todowrite builtin, which every default server has.
 */
function replayedCall(names: Set<string>): OpenAIToolCall {
  if (toolArg) {
    return { id: "call_1", type: "function", function: { name: toolArg, arguments: argsArg ?? "{}" } };
  }
  if (names.has("debug_echo")) {
    return { id: "call_1", type: "function", function: { name: "debug_echo", arguments: '{"greeting":"hello from node","n":3}' } };
  }
  return {
    id: "call_1",
    type: "function",
    function: { name: "todowrite", arguments: '{"todos":[{"id":"1","text":"call toolnexus from node","completed":true}]}' },
  };
}

/**
 * The answer's data for a pending request. A sampling request asks the
 * agent's model for a completion: the model's text goes back as MCP's
 * CreateMessageResult. Anything else (an elicitation's content, the text
 * an A2A agent asked for, the question tool's answers) goes as it is.
 */
function answerData(kind: string, answer: JsonValue): JsonValue {
  if (kind === "sampling" && typeof answer === "string") {
    return { role: "assistant", model: "example-model", content: { type: "text", text: answer } };
  }
  return answer;
}

/**
 * A call that suspended (OUTCOME_PENDING: an MCP server's elicitation or
 * sampling, an A2A agent's input-required, the question tool) waits for an
 * answer. Show what it asks; when $TOOLNEXUS_ANSWER holds one (a JSON value:
 * the elicitation's content, the completion's text for sampling...), send it
 * with the same name and arguments, and return what the call does next.
 */
async function resume(call: OpenAIToolCall, result: ToolResult): Promise<ToolResult> {
  const answer = process.env.TOOLNEXUS_ANSWER;
  while (result.outcome === Outcome.PENDING && result.pending) {
    const p = result.pending;
    console.log(`pending: ${p.kind} ${JSON.stringify(p.prompt)}`);
    if (answer === undefined) {
      return result;
    }
    const resp = await registry.execute(
      {
        name: call.function.name,
        input: { case: "argumentsJson", value: call.function.arguments },
        callId: call.id,
        answer: { id: p.id, ok: true, data: fromJson(ValueSchema, answerData(p.kind, JSON.parse(answer) as JsonValue)) },
      },
      { timeoutMs: 60_000 },
    );
    if (!resp.result) {
      throw new Error("Execute returned no result");
    }
    if (resp.result.outcome === Outcome.PENDING && resp.result.pending?.id === p.id) {
      return resp.result; // the answer was refused; it says why
    }
    result = resp.result;
  }
  return result;
}

async function main(): Promise<number> {
  const { tools, revision } = await listTools();
  console.log(`connected to ${addr} (registry revision ${revision})`);
  console.log(`tools (${tools.length}): ${tools.map((t) => t.name).join(", ")}`);

  // The exact JSON OpenAI's `tools` request field takes: no reshaping here.
  const exported = await registry.exportTools({ format: ExportFormat.OPENAI }, { timeoutMs: 10_000 });
  const openaiTools = JSON.parse(exported.json) as { type: string; function: Record<string, unknown> }[];
  console.log(`openai tools: ${openaiTools.length} function declarations`);
  const first = openaiTools[0];
  if (first) {
    console.log(`first declaration: type=${first.type} function keys=${Object.keys(first.function).join(",")}`);
  }

  const call = replayedCall(new Set(tools.map((t) => t.name)));
  console.log(`model called: ${call.function.name} ${call.function.arguments}`);

  // arguments_json hands the model's text over verbatim: no parse and
  // re-encode on the way, so numbers stay exact. ExecuteStream shows what
  // the tool reports while it runs (bash's output, an MCP server's
  // progress and logs); the result is always the last event.
  let result: ToolResult | undefined;
  for await (const event of registry.executeStream(
    { name: call.function.name, input: { case: "argumentsJson", value: call.function.arguments }, callId: call.id },
    { timeoutMs: 60_000 },
  )) {
    const e = event.event;
    switch (e.case) {
      case "output": {
        const stream = e.value.stream === OutputStream.STDERR ? "stderr" : "stdout";
        console.log(`live ${stream}: ${JSON.stringify(new TextDecoder().decode(e.value.data))}`);
        break;
      }
      case "progress": {
        const total = e.value.total ? `/${e.value.total}` : "";
        console.log(`progress: ${e.value.progress}${total} ${e.value.message}`.trimEnd());
        break;
      }
      case "log":
        console.log(`log [${e.value.level}] ${e.value.logger}: ${JSON.stringify(e.value.data)}`);
        break;
      case "result":
        result = e.value;
        break;
    }
  }
  if (!result) {
    throw new Error("ExecuteStream ended without a result");
  }
  result = await resume(call, result);
  // A failing tool is a normal result: the model reads the output and retries.
  const outcome = Outcome[result.outcome]?.toLowerCase() ?? String(result.outcome);
  console.log(`result: ${outcome} is_error=${result.isError} output=${JSON.stringify(result.output)}`);
  if (result.metadata) {
    console.log(`metadata: ${JSON.stringify(result.metadata)}`);
  }
  const toolMessage = { role: "tool", tool_call_id: call.id, content: result.output };
  console.log(`tool message: ${JSON.stringify(toolMessage)}`);
  return result.isError ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e = ConnectError.from(err);
    console.error(`toolnexus at ${addr}: ${Code[e.code].toLowerCase()}: ${e.rawMessage}`);
    process.exitCode = 2;
  },
);
