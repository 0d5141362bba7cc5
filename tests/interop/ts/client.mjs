// ACP client peer on the official TypeScript SDK (`@agentclientprotocol/sdk`).
//
// Usage: node client.mjs -- AGENT [ARGS...]
//        node client.mjs --prompt TEXT -- AGENT [ARGS...]
//
// Drives the agent through a scenario of demo-backend commands (the top README,
// "The demo commands") and prints `ok <step>` per step, `FAIL <step>: <why>` on
// the first failure (exit 1), and `N passed, 0 failed` at the end.
// A global 30 s timeout exits 1.
//
// With `--prompt TEXT` it sends that one prompt instead, in a session whose cwd is
// the current directory, for any backend (the llm backend's tests): see
// tests/interop/README.md, "One prompt".

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const ASK_USER = "_agentao.cn/ask_user";
const FILE_TEXT = "interop peer file, plain ASCII text.\n";
const GLOBAL_TIMEOUT_MS = 30_000;
const STEPS = ["initialize", "session/new", "tool allow_once", "tool reject_once", "ask", "read", "cancel"];

class StepFailed extends Error {
  constructor(step, why) {
    super(`${step}: ${why}`);
    this.step = step;
    this.why = why;
  }
}

/** What the agent asked of us during the current turn, and how to answer. */
const state = {
  permissionAnswer: "allow_once",
  askAnswer: "Ada",
  updates: [],
  permissionRequests: [],
  reads: [],
  questions: [],
  onUpdate: null,
};

function beginTurn() {
  state.updates = [];
  state.permissionRequests = [];
  state.reads = [];
  state.questions = [];
  state.onUpdate = null;
}

function texts(updates, kinds) {
  const out = [];
  for (const update of updates) {
    if (!kinds.includes(update.sessionUpdate)) continue;
    if (update.sessionUpdate === "agent_message_chunk") {
      if (update.content?.type === "text") out.push(update.content.text);
    } else {
      for (const item of update.content ?? []) {
        if (item.type === "content" && item.content?.type === "text") out.push(item.content.text);
      }
    }
  }
  return out;
}

function toolStatuses(updates) {
  return updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status).map((u) => u.status);
}

/** The `_agentao.cn/ask_user` params: the SDK wants a parser for extension methods. */
const askUserParams = {
  parse(params) {
    if (typeof params !== "object" || params === null || typeof params.question !== "string") {
      throw acp.RequestError.invalidParams(undefined, "ask_user needs a string question");
    }
    return params;
  },
};

/** `--prompt` mode: stream the answer's text to stdout, report permissions on stderr. */
let promptMode = false;

const app = acp
  .client({ name: "peer-client-ts" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    state.updates.push(params.update);
    state.onUpdate?.();
    const update = params.update;
    if (promptMode && update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") {
      process.stdout.write(update.content.text);
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    state.permissionRequests.push(params);
    const ids = params.options.map((o) => o.optionId);
    const chosen = ids.includes(state.permissionAnswer) ? state.permissionAnswer : "cancelled";
    if (promptMode) console.error(`permission: ${params.toolCall.title} -> ${chosen}`);
    if (chosen === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: chosen } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    state.reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest(ASK_USER, askUserParams, ({ params }) => {
    state.questions.push(params);
    return { outcome: "answered", text: state.askAnswer };
  });

let passed = 0;
/** The agent process, killed if the global timeout fires. */
let agentProcess = null;
function ok(step) {
  passed += 1;
  console.log(`ok ${step}`);
}

async function prompt(cx, sessionId, text) {
  beginTurn();
  return cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

async function toolStep(cx, step, sessionId, answer, want) {
  state.permissionAnswer = answer;
  const response = await prompt(cx, sessionId, "/tool edit Fix");
  if (state.permissionRequests.length !== 1) {
    throw new StepFailed(step, `expected 1 permission request, got ${state.permissionRequests.length}`);
  }
  const request = state.permissionRequests[0];
  const ids = request.options.map((o) => o.optionId).sort();
  const wantIds = ["allow_always", "allow_once", "reject_always", "reject_once"];
  if (JSON.stringify(ids) !== JSON.stringify(wantIds)) throw new StepFailed(step, `permission options were ${ids}`);
  const start = state.updates.find((u) => u.sessionUpdate === "tool_call");
  if (!start || start.toolCallId !== request.toolCall.toolCallId) {
    throw new StepFailed(step, "permission request does not name the announced tool_call");
  }
  const statuses = toolStatuses(state.updates);
  if (!statuses.includes(want)) throw new StepFailed(step, `expected a tool_call_update ${want}, got statuses ${statuses}`);
  if (response.stopReason !== "end_turn") throw new StepFailed(step, `stopReason ${response.stopReason}`);
  ok(step);
}

async function scenario(cx, workDir, filePath) {
  let step = "initialize";
  const init = await cx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
    clientInfo: { name: "peer-client-ts", title: "TypeScript SDK peer client", version: "0.0.0" },
  });
  if (init.protocolVersion !== 1) throw new StepFailed(step, `protocolVersion ${init.protocolVersion}`);
  ok(step);

  step = "session/new";
  const session = await cx.request(acp.methods.agent.session.new, { cwd: workDir, mcpServers: [] });
  if (!session.sessionId) throw new StepFailed(step, "empty sessionId");
  const sessionId = session.sessionId;
  ok(step);

  await toolStep(cx, "tool allow_once", sessionId, "allow_once", "completed");
  await toolStep(cx, "tool reject_once", sessionId, "reject_once", "failed");

  step = "ask";
  state.askAnswer = "Ada";
  let response = await prompt(cx, sessionId, "/ask Your name?");
  const questions = state.questions.map((q) => q.question);
  if (JSON.stringify(questions) !== JSON.stringify(["Your name?"])) {
    throw new StepFailed(step, `ask_user requests were ${JSON.stringify(state.questions)}`);
  }
  if (state.questions[0].sessionId !== sessionId) throw new StepFailed(step, "ask_user sessionId does not match");
  let said = texts(state.updates, ["agent_message_chunk"]);
  if (!said.some((t) => t.includes("Ada"))) {
    throw new StepFailed(step, `no agent_message_chunk with the answer, got ${JSON.stringify(said)}`);
  }
  if (response.stopReason !== "end_turn") throw new StepFailed(step, `stopReason ${response.stopReason}`);
  ok(step);

  step = "read";
  response = await prompt(cx, sessionId, `/read ${filePath}`);
  if (JSON.stringify(state.reads) !== JSON.stringify([filePath])) {
    throw new StepFailed(step, `fs/read_text_file calls were ${JSON.stringify(state.reads)}`);
  }
  const size = String(Buffer.byteLength(FILE_TEXT, "utf8"));
  said = texts(state.updates, ["agent_message_chunk", "tool_call", "tool_call_update"]);
  if (!said.some((t) => t.includes(size))) {
    throw new StepFailed(step, `no reply mentions ${size} bytes, got ${JSON.stringify(said)}`);
  }
  if (response.stopReason !== "end_turn") throw new StepFailed(step, `stopReason ${response.stopReason}`);
  ok(step);

  step = "cancel";
  beginTurn();
  let ended = false;
  const turn = cx
    .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/sleep 10000" }] })
    .finally(() => {
      ended = true;
    });
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    state.onUpdate = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  if (ended) throw new StepFailed(step, "the turn ended before the cancel");
  await cx.notify(acp.methods.agent.session.cancel, { sessionId });
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new StepFailed(step, "no answer within 5 s of session/cancel")), 5_000);
  });
  response = await Promise.race([turn, late]).finally(() => clearTimeout(timer));
  if (response.stopReason !== "cancelled") throw new StepFailed(step, `stopReason ${response.stopReason}, expected cancelled`);
  ok(step);
}

/** One prompt in a new session in the current directory; the answer is the exit code. */
async function onePrompt(cx, text) {
  await cx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "peer-client-ts", title: "TypeScript SDK peer client", version: "0.0.0" },
  });
  const session = await cx.request(acp.methods.agent.session.new, { cwd: realpathSync(process.cwd()), mcpServers: [] });
  const response = await prompt(cx, session.sessionId, text);
  console.log(`\nstop reason: ${response.stopReason}`);
  return response.stopReason === "end_turn" ? 0 : 1;
}

async function runPrompt(args, text) {
  promptMode = true;
  const child = spawn(args[0], args.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  agentProcess = child;
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.on("error", (error) => {
    console.log(`FAIL prompt: cannot start the agent: ${error.message}`);
    process.exit(1);
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let code;
  try {
    code = await app.connectWith(stream, (cx) => onePrompt(cx, text));
  } catch (error) {
    const why = error?.message ?? String(error);
    const data = error?.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
    console.log(`\nFAIL prompt: ${why}${data}`);
    code = 1;
  }
  child.stdin.end();
  const stop = setTimeout(() => child.kill("SIGKILL"), 2_000);
  await exited;
  clearTimeout(stop);
  return code;
}

async function main() {
  let args = process.argv.slice(2);
  let text = null;
  if (args.length >= 2 && args[0] === "--prompt") {
    text = args[1];
    args = args.slice(2);
  }
  if (args[0] === "--") args = args.slice(1);
  if (args.length === 0) {
    console.error("usage: client.mjs [--prompt TEXT] -- AGENT [ARGS...]");
    return 2;
  }
  if (text !== null) return runPrompt(args, text);
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "acp-interop-")));
  const filePath = join(workDir, "hello.txt");
  writeFileSync(filePath, FILE_TEXT);
  const child = spawn(args[0], args.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  agentProcess = child;
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.on("error", (error) => {
    console.log(`FAIL ${STEPS[passed]}: cannot start the agent: ${error.message}`);
    process.exit(1);
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let code = 0;
  try {
    await app.connectWith(stream, (cx) => scenario(cx, workDir, filePath));
    console.log(`${passed} passed, 0 failed`);
  } catch (error) {
    if (error instanceof StepFailed) {
      console.log(`FAIL ${error.step}: ${error.why}`);
    } else {
      const why = error?.message ?? String(error);
      const data = error?.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
      console.log(`FAIL ${STEPS[Math.min(passed, STEPS.length - 1)]}: ${why}${data}`);
    }
    code = 1;
  }
  child.stdin.end();
  const stop = setTimeout(() => child.kill("SIGKILL"), 2_000);
  await exited;
  clearTimeout(stop);
  rmSync(workDir, { recursive: true, force: true });
  return code;
}

const deadline = setTimeout(() => {
  console.log(`FAIL timeout: no result within ${GLOBAL_TIMEOUT_MS / 1000} s`);
  agentProcess?.kill("SIGKILL");
  process.exit(1);
}, GLOBAL_TIMEOUT_MS);
deadline.unref();
main().then((code) => process.exit(code));
