// ACP agent peer on the official TypeScript SDK (`@agentclientprotocol/sdk`).
//
// A small subset of the demo backend (the top README, "The demo commands"), so
// our client can be tested against a real SDK agent:
//
//   /echo TEXT          one agent_message_chunk with TEXT
//   /tool KIND TITLE    tool_call pending -> session/request_permission ->
//                       in_progress + completed (allowed) or failed (rejected)
//   /read PATH          fs/read_text_file when the client offers it, otherwise a
//                       local read; reports the byte count
//   /ask QUESTION       `_agentao.cn/ask_user`; echoes the answer
//   /sleep MS           waits; session/cancel ends the wait -> stopReason cancelled
//
// After every session/new answer it advertises these commands
// (available_commands_update), so a client, and `acp-cli conform`, can drive them.
//
// Run: node agent.mjs   (speaks ACP over stdin/stdout)

import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const ASK_USER = "_agentao.cn/ask_user";
const USER_UNAVAILABLE = "(user unavailable)";
const COMMANDS = "/echo TEXT, /tool KIND TITLE, /read PATH, /ask QUESTION, /sleep MS";
const ADVERTISED = [
  { name: "echo", description: "Say TEXT back as one agent message", input: { hint: "TEXT" } },
  { name: "tool", description: "A tool call that asks for permission first", input: { hint: "KIND TITLE" } },
  { name: "read", description: "Read a file (through the client when it offers fs)", input: { hint: "PATH" } },
  { name: "ask", description: "Ask the user a question (_agentao.cn/ask_user)", input: { hint: "QUESTION" } },
  { name: "sleep", description: "Wait MS milliseconds; session/cancel ends the wait", input: { hint: "MS" } },
];
const PERMISSION_OPTIONS = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Allow always", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject once", kind: "reject_once" },
  { optionId: "reject_always", name: "Reject always", kind: "reject_always" },
];

// Self-check of the client peers (run-peers.sh): PEER_AGENT_FAULT=deny makes every
// /tool fail even when allowed, so a client that does not notice is caught.
const FAULT_DENY = process.env.PEER_AGENT_FAULT === "deny";

class Cancelled extends Error {}

/** sessionId -> { cwd, cancel: AbortController of the running turn } */
const sessions = new Map();
let clientReadsFiles = false;
let nextSession = 0;
let nextToolCall = 0;

/** Resolves when `signal` aborts; never rejects. */
function aborted(signal) {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

class Turn {
  constructor(client, sessionId, session, signal) {
    this.client = client;
    this.sessionId = sessionId;
    this.session = session;
    this.signal = signal;
  }

  update(update) {
    return this.client.notify(acp.methods.client.session.update, { sessionId: this.sessionId, update });
  }

  say(text) {
    return this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  }

  async line(line) {
    if (!line.startsWith("/")) {
      if (line.trim()) await this.say(line);
      return;
    }
    const space = line.indexOf(" ");
    const command = space < 0 ? line : line.slice(0, space);
    const rest = space < 0 ? "" : line.slice(space + 1);
    switch (command) {
      case "/echo":
        return this.say(rest);
      case "/tool": {
        const at = rest.indexOf(" ");
        const kind = (at < 0 ? rest : rest.slice(0, at)) || "other";
        const title = (at < 0 ? "" : rest.slice(at + 1)) || "tool";
        return this.tool(kind, title);
      }
      case "/read":
        return this.read(rest.trim());
      case "/ask":
        return this.ask(rest);
      case "/sleep":
        return this.sleep(rest.trim());
      default:
        return this.say(`unknown command ${command}; commands: ${COMMANDS}`);
    }
  }

  async tool(kind, title) {
    const toolCallId = `call-${++nextToolCall}`;
    await this.update({ sessionUpdate: "tool_call", toolCallId, title, kind, status: "pending" });
    let allowed = false;
    try {
      const answer = await Promise.race([
        this.client.request(acp.methods.client.session.requestPermission, {
          sessionId: this.sessionId,
          toolCall: { toolCallId, title, kind, status: "pending" },
          options: PERMISSION_OPTIONS,
        }),
        aborted(this.signal).then(() => null),
      ]);
      const outcome = answer?.outcome;
      allowed = outcome?.outcome === "selected" && ["allow_once", "allow_always"].includes(outcome.optionId);
    } catch {
      allowed = false; // an error answer means rejected
    }
    if (this.signal.aborted || FAULT_DENY) allowed = false;
    if (!allowed) {
      await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      if (this.signal.aborted) throw new Cancelled();
      return;
    }
    await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    await this.update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: `${title}: done` } }],
    });
  }

  async read(path) {
    const full = isAbsolute(path) ? path : join(this.session.cwd, path);
    const toolCallId = `call-${++nextToolCall}`;
    await this.update({ sessionUpdate: "tool_call", toolCallId, title: `Read ${path}`, kind: "read", status: "pending" });
    let content;
    try {
      content = clientReadsFiles
        ? (await this.client.request(acp.methods.client.fs.readTextFile, { sessionId: this.sessionId, path: full })).content
        : readFileSync(full, "utf8");
    } catch (error) {
      await this.update({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: String(error?.message ?? error) } }],
      });
      return;
    }
    const report = `read ${Buffer.byteLength(content, "utf8")} bytes from ${path}`;
    await this.update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: report } }],
    });
    await this.say(report);
  }

  async ask(question) {
    let text = USER_UNAVAILABLE;
    try {
      const answer = await this.client.request(ASK_USER, { sessionId: this.sessionId, question });
      if (answer?.outcome === "answered" && typeof answer.text === "string" && answer.text) text = answer.text;
    } catch {
      // an error answer gives the sentinel
    }
    await this.say(text);
  }

  async sleep(arg) {
    const parsed = Number.parseInt(arg, 10);
    const ms = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 600_000) : 0;
    let timer;
    const done = await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(() => resolve("slept"), ms);
      }),
      aborted(this.signal).then(() => "cancelled"),
    ]);
    clearTimeout(timer);
    if (done === "cancelled") throw new Cancelled();
  }
}

const app = acp
  .agent({ name: "peer-agent-ts" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    clientReadsFiles = params.clientCapabilities?.fs?.readTextFile === true;
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {},
      authMethods: [],
      agentInfo: { name: "peer-agent-ts", title: "TypeScript SDK peer agent", version: "0.0.0" },
      _meta: { "_agentao.cn/extensions": [ASK_USER] },
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
    const sessionId = `ts-session-${++nextSession}`;
    sessions.set(sessionId, { cwd: params.cwd, cancel: null });
    // After the answer: it is written in the promise jobs that follow this return, all of
    // which run before a setImmediate callback.
    setImmediate(() => {
      client
        .notify(acp.methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "available_commands_update", availableCommands: ADVERTISED },
        })
        .catch(() => {});
    });
    return { sessionId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.cancel?.abort();
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw acp.RequestError.invalidRequest(undefined, `unknown sessionId: ${params.sessionId}`);
    const cancel = new AbortController();
    session.cancel = cancel;
    const turn = new Turn(client, params.sessionId, session, cancel.signal);
    const lines = params.prompt.filter((b) => b.type === "text").flatMap((b) => b.text.split(/\r?\n/));
    try {
      for (const line of lines) {
        if (cancel.signal.aborted) throw new Cancelled();
        await turn.line(line);
      }
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error;
    } finally {
      session.cancel = null;
    }
    return { stopReason: cancel.signal.aborted ? "cancelled" : "end_turn" };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
