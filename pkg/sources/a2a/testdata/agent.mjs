// A real A2A agent built on the official JavaScript SDK, for the Go tests.
//
//   node agent.mjs NODE_DIR PROTO [stream]
//
// NODE_DIR is e2e/node (its node_modules holds the SDKs); PROTO is
//   1.0     @a2a-js/sdk 1.x, a 1.0-only card
//   0.3     a2a-sdk-03 (the npm alias of @a2a-js/sdk 0.3.x), a 0.3 card
//   compat  @a2a-js/sdk 1.x with the v0.3 compat layer on: the card lists
//           a 0.3 and a 1.0 JSON-RPC interface and the client should pick 1.0
//
// It listens on 127.0.0.1 on a free port and prints one line,
// "listening http://127.0.0.1:PORT", then serves until stdin closes (so it
// dies with the test process even if that one is killed).
//
// The task text is a tiny script, so tests drive the agent without sleeps:
//   "complete after N"     working until N GetTask polls have been seen, then
//                          two artifacts ("alpha", "beta" + "gamma") and completed
//   "fail after N: MSG"    working until N polls, then failed with message MSG
//   "hang"                 working until canceled
//   "hang notify=URL"      as hang, and GETs URL when the first poll arrives
//                          (before answering it) so a test can cancel its call
//   "instant"              the submit answer is already completed
//   "stream N"             N working status updates ("step 1".."step N"), no
//                          polls needed, then the two artifacts and completed
//   "stream hang"          one working update ("started"), then working until
//                          canceled
//   "ask QUESTION"         input-required at once, the status message QUESTION;
//                          the next message on the task (same taskId and
//                          contextId) completes it with the artifact
//                          "answer: TEXT" (TEXT the message's text parts, data
//                          parts as JSON, joined by " | ")
//
// With "stream" the card says capabilities.streaming, so clients may use
// message/stream (SendStreamingMessage in 1.0) and read the updates as SSE.
//
// GET /stats answers {"submits":N,"gets":{ID:N},"cancels":[ID],"versions":[...],
// "answers":[{"taskId","contextId"}]} (answers: the messages that continued a task):
// what the agent saw on the wire, for the tests' assertions.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

const [nodeDir, proto, streamArg] = process.argv.slice(2);
const streaming = streamArg === 'stream';
if (!nodeDir || !['1.0', '0.3', 'compat'].includes(proto)) {
  console.error('usage: node agent.mjs NODE_DIR 1.0|0.3|compat');
  process.exit(2);
}
// The SDKs live in e2e/node/node_modules, not beside this file: resolve
// them from there.
const require = createRequire(join(nodeDir, 'package.json'));
const express = require('express');

const stats = { submits: 0, gets: {}, cancels: [], versions: [], answers: [] };
const asking = new Set(); // taskIds in input-required, waiting for the next message
const pollWaiters = new Map(); // taskId -> [{n, resolve}]
const cancelled = new Map(); // taskId -> resolve of the running script
const notified = new Set();
const contexts = new Map(); // taskId -> contextId, for the cancel event

function pollsOf(id) {
  return stats.gets[id] ?? 0;
}

// waitPolls resolves true after n polls of the task, false when it is canceled.
function waitPolls(id, n) {
  return new Promise((resolve) => {
    cancelled.set(id, () => resolve(false));
    if (n !== Infinity && pollsOf(id) >= n) return resolve(true);
    const list = pollWaiters.get(id) ?? [];
    list.push({ n, resolve: () => resolve(true) });
    pollWaiters.set(id, list);
  });
}

function parseScript(text) {
  let m;
  if ((m = /^complete after (\d+)$/.exec(text))) return { kind: 'complete', n: Number(m[1]) };
  if ((m = /^fail after (\d+): (.*)$/s.exec(text))) return { kind: 'fail', n: Number(m[1]), msg: m[2] };
  if ((m = /^hang(?: notify=(\S+))?$/.exec(text))) return { kind: 'hang', notify: m[1] };
  if (text === 'instant') return { kind: 'instant' };
  if (text === 'stream hang') return { kind: 'streamhang' };
  if ((m = /^stream (\d+)$/.exec(text))) return { kind: 'stream', n: Number(m[1]) };
  if ((m = /^ask (.+)$/s.exec(text))) return { kind: 'ask', question: m[1] };
  return { kind: 'complete', n: 0 };
}

const app = express();
const rpcPath = '/a2a/jsonrpc';
const notifyURLs = new Map(); // taskId -> URL

// Count what arrives before the SDK sees it. express.json() here leaves
// req.body parsed, and the SDK's own body parser then skips it.
app.use(rpcPath, express.json(), async (req, res, next) => {
  const method = req.body?.method;
  const id = req.body?.params?.id;
  if (method === 'SendMessage' || method === 'message/send' || method === 'SendStreamingMessage' || method === 'message/stream') {
    stats.submits++;
    stats.versions.push(req.header('A2A-Version') ?? '');
  } else if (method === 'GetTask' || method === 'tasks/get') {
    stats.gets[id] = pollsOf(id) + 1;
    const n = stats.gets[id];
    const list = pollWaiters.get(id) ?? [];
    pollWaiters.set(id, list.filter((w) => (n >= w.n ? (w.resolve(), false) : true)));
    const url = notifyURLs.get(id);
    if (url && !notified.has(id)) {
      notified.add(id);
      try {
        await fetch(url);
      } catch (err) {
        console.error('notify failed:', err.message);
      }
    }
  } else if (method === 'CancelTask' || method === 'tasks/cancel') {
    stats.cancels.push(id);
  }
  next();
});
app.get('/stats', (_req, res) => res.json(stats));

const skills = [
  { id: 'echo', name: 'Echo', description: 'Runs the scripted task and reports back.', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
  { id: 'review.code', name: 'Review code', description: 'Reviews code.', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
];

const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  if (proto === '0.3') setup03(base);
  else setup10(base, proto === 'compat');
  console.log(`listening ${base}`);
});

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));

function setup10(base, compat) {
  const { DefaultRequestHandler, InMemoryTaskStore, AgentEvent } = require('@a2a-js/sdk/server');
  const { jsonRpcHandler, agentCardHandler, UserBuilder } = require('@a2a-js/sdk/server/express');
  const { TaskState, Role } = require('@a2a-js/sdk');

  const interfaces = [{ url: base + rpcPath, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }];
  if (compat) {
    // Listed first on purpose: the client must still prefer 1.0.
    interfaces.unshift({ url: base + rpcPath, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' });
  }
  const card = {
    name: compat ? 'Node Compat Agent' : 'Node Agent 1.0',
    description: 'A scripted test agent (A2A 1.0).',
    supportedInterfaces: interfaces,
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills,
    signatures: [],
  };
  const now = () => new Date().toISOString();
  const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
  const agentMsg = (taskId, contextId, value) => ({
    messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [text(value)],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  });
  const status = (taskId, contextId, state, message) =>
    AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: now() }, metadata: undefined });
  const artifact = (taskId, contextId, artifactId, values) =>
    AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId, name: '', description: '', parts: values.map(text), metadata: undefined, extensions: [] },
    });

  const executor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      contexts.set(taskId, contextId);
      if (ctx.task && asking.delete(taskId)) {
        const parts = ctx.userMessage.parts.map((p) => (p.content?.$case === 'data' ? JSON.stringify(p.content.value) : p.content?.value ?? ''));
        stats.answers.push({ taskId: ctx.userMessage.taskId, contextId: ctx.userMessage.contextId });
        // A stream must open with the task (this SDK refuses a status
        // update first), so the continuation republishes it as working.
        bus.publish(AgentEvent.task({
          ...ctx.task, artifacts: [], status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
        }));
        bus.publish(artifact(taskId, contextId, 'a1', ['answer: ' + parts.join(' | ')]));
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMsg(taskId, contextId, 'done')));
        bus.finished();
        return;
      }
      const input = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const script = parseScript(input);
      if (script.kind === 'instant') {
        bus.publish(AgentEvent.task({
          id: taskId, contextId, history: [ctx.userMessage], metadata: undefined,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() },
          artifacts: [{ artifactId: 'a1', name: '', description: '', parts: [text('instant answer')], metadata: undefined, extensions: [] }],
        }));
        bus.finished();
        return;
      }
      if (script.notify) notifyURLs.set(taskId, script.notify);
      bus.publish(AgentEvent.task({
        id: taskId, contextId, history: [ctx.userMessage], artifacts: [], metadata: undefined,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      }));
      if (script.kind === 'ask') {
        asking.add(taskId);
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, agentMsg(taskId, contextId, script.question)));
        bus.finished();
        return;
      }
      if (script.kind === 'stream' || script.kind === 'streamhang') {
        if (script.kind === 'streamhang') {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, agentMsg(taskId, contextId, 'started')));
          await waitPolls(taskId, Infinity);
          return;
        }
        for (let i = 1; i <= script.n; i++) {
          bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, agentMsg(taskId, contextId, `step ${i}`)));
        }
        script.kind = 'complete';
        script.n = 0;
      } else {
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, undefined));
      }
      const done = await waitPolls(taskId, script.kind === 'hang' ? Infinity : script.n);
      if (!done) return; // canceled: cancelTask published the final state
      if (script.kind === 'fail') {
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_FAILED, agentMsg(taskId, contextId, script.msg)));
      } else {
        bus.publish(artifact(taskId, contextId, 'a1', ['alpha']));
        bus.publish(artifact(taskId, contextId, 'a2', ['beta', 'gamma']));
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMsg(taskId, contextId, 'done')));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      const stop = cancelled.get(taskId);
      cancelled.delete(taskId);
      if (stop) stop();
      bus.publish(status(taskId, contexts.get(taskId) ?? '', TaskState.TASK_STATE_CANCELED, undefined));
      bus.finished();
    },
  };

  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const legacyCompat = compat ? { enabled: true } : undefined;
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat }));
  app.use(rpcPath, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
}

function setup03(base) {
  const { DefaultRequestHandler, InMemoryTaskStore } = require('a2a-sdk-03/server');
  const { jsonRpcHandler, agentCardHandler, UserBuilder } = require('a2a-sdk-03/server/express');

  const card = {
    name: 'Node Agent 0.3',
    description: 'A scripted test agent (A2A 0.3).',
    url: base + rpcPath,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    version: '1.0.0',
    capabilities: { streaming, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skills.map(({ id, name, description, tags }) => ({ id, name, description, tags })),
  };
  const now = () => new Date().toISOString();
  const agentMsg = (taskId, contextId, text) => ({
    kind: 'message', role: 'agent', messageId: randomUUID(), taskId, contextId, parts: [{ kind: 'text', text }],
  });
  const status = (taskId, contextId, state, message, final) =>
    ({ kind: 'status-update', taskId, contextId, status: { state, message, timestamp: now() }, final });
  const artifact = (taskId, contextId, artifactId, texts) => ({
    kind: 'artifact-update', taskId, contextId, append: false, lastChunk: true,
    artifact: { artifactId, parts: texts.map((text) => ({ kind: 'text', text })) },
  });

  const executor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      contexts.set(taskId, contextId);
      if (ctx.task && asking.delete(taskId)) {
        const parts = ctx.userMessage.parts.map((p) => (p.kind === 'data' ? JSON.stringify(p.data) : p.text ?? ''));
        stats.answers.push({ taskId: ctx.userMessage.taskId, contextId: ctx.userMessage.contextId });
        bus.publish(status(taskId, contextId, 'working', undefined, false));
        bus.publish(artifact(taskId, contextId, 'a1', ['answer: ' + parts.join(' | ')]));
        bus.publish(status(taskId, contextId, 'completed', agentMsg(taskId, contextId, 'done'), true));
        bus.finished();
        return;
      }
      const input = ctx.userMessage.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
      const script = parseScript(input);
      if (script.kind === 'instant') {
        bus.publish({
          kind: 'task', id: taskId, contextId, history: [ctx.userMessage],
          status: { state: 'completed', timestamp: now() },
          artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text: 'instant answer' }] }],
        });
        bus.finished();
        return;
      }
      if (script.notify) notifyURLs.set(taskId, script.notify);
      bus.publish({ kind: 'task', id: taskId, contextId, history: [ctx.userMessage], status: { state: 'submitted', timestamp: now() } });
      if (script.kind === 'ask') {
        asking.add(taskId);
        bus.publish(status(taskId, contextId, 'input-required', agentMsg(taskId, contextId, script.question), true));
        bus.finished();
        return;
      }
      if (script.kind === 'stream' || script.kind === 'streamhang') {
        if (script.kind === 'streamhang') {
          bus.publish(status(taskId, contextId, 'working', agentMsg(taskId, contextId, 'started'), false));
          await waitPolls(taskId, Infinity);
          return;
        }
        for (let i = 1; i <= script.n; i++) {
          bus.publish(status(taskId, contextId, 'working', agentMsg(taskId, contextId, `step ${i}`), false));
        }
        script.kind = 'complete';
        script.n = 0;
      } else {
        bus.publish(status(taskId, contextId, 'working', undefined, false));
      }
      const done = await waitPolls(taskId, script.kind === 'hang' ? Infinity : script.n);
      if (!done) return;
      if (script.kind === 'fail') {
        bus.publish(status(taskId, contextId, 'failed', agentMsg(taskId, contextId, script.msg), true));
      } else {
        bus.publish(artifact(taskId, contextId, 'a1', ['alpha']));
        bus.publish(artifact(taskId, contextId, 'a2', ['beta', 'gamma']));
        bus.publish(status(taskId, contextId, 'completed', agentMsg(taskId, contextId, 'done'), true));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      const stop = cancelled.get(taskId);
      cancelled.delete(taskId);
      if (stop) stop();
      bus.publish(status(taskId, contexts.get(taskId) ?? '', 'canceled', undefined, true));
      bus.finished();
    },
  };

  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use(rpcPath, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
}
