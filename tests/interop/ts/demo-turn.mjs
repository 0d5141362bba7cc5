// The agent peers' turn on the official TypeScript SDK: the commands of the stdio peer
// (agent.mjs) and of the network peer (../ts-http/agent.mjs), which both import this module
// (tests/interop/README.md, "What an agent peer does"). It imports no package: each
// directory has its own node_modules, so the SDK's method names come from the importer.

import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

export const ASK_USER = "_agentao.cn/ask_user";
const USER_UNAVAILABLE = "(user unavailable)";
const COMMANDS = "/echo TEXT, /tool KIND TITLE, /read PATH, /ask QUESTION, /sleep MS";
const COMMANDS_WITH_FLOOD = `${COMMANDS}, /flood N [BYTES]`;
const PERMISSION_OPTIONS = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Allow always", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject once", kind: "reject_once" },
  { optionId: "reject_always", name: "Reject always", kind: "reject_always" },
];
const FLOOD_DEFAULT_BYTES = 32;
const FLOOD_MAX_BYTES = 1 << 20;
/** `/flood` yields after this many sends, as a streaming agent would (and as the Rust peer does). */
const FLOOD_YIELD_EVERY = 64;

/** Thrown out of a turn when session/cancel arrived. */
class Cancelled extends Error {}

let nextToolCall = 0;

/**
 * Runs `params.prompt` (a `session/prompt`) in `session` ({ cwd, cancel }), line by line;
 * `session.cancel` is the turn's AbortController while it runs (session/cancel aborts it).
 * `options` as for `Turn`. Returns the `session/prompt` answer.
 */
export async function runTurn(client, params, session, options) {
  const cancel = new AbortController();
  session.cancel = cancel;
  const turn = new Turn(client, params.sessionId, session, cancel.signal, options);
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
}

/** Resolves when `signal` aborts; never rejects. */
function aborted(signal) {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

class Turn {
  /**
   * One `session/prompt` of `session` ({ cwd }) on `client`, cancelled when `signal` aborts.
   * `options`: `methods`, the SDK's `acp.methods` (the importer's copy of the SDK);
   * `clientReadsFiles`, whether the client offered fs/read_text_file; `flood`, whether
   * /flood is served; `faultDeny`, every /tool fails even when allowed (the client peers'
   * self-check, run-peers.sh).
   */
  constructor(client, sessionId, session, signal, options) {
    this.client = client;
    this.sessionId = sessionId;
    this.session = session;
    this.signal = signal;
    this.methods = options.methods;
    this.clientReadsFiles = options.clientReadsFiles;
    this.serveFlood = options.flood;
    this.faultDeny = options.faultDeny;
  }

  update(update) {
    return this.client.notify(this.methods.client.session.update, { sessionId: this.sessionId, update });
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
      case "/flood":
        if (this.serveFlood) return this.flood(rest);
      // falls through: this peer does not serve /flood
      default:
        return this.say(`unknown command ${command}; commands: ${this.serveFlood ? COMMANDS_WITH_FLOOD : COMMANDS}`);
    }
  }

  async tool(kind, title) {
    const toolCallId = `call-${++nextToolCall}`;
    await this.update({ sessionUpdate: "tool_call", toolCallId, title, kind, status: "pending" });
    let allowed = false;
    try {
      const answer = await Promise.race([
        this.client.request(this.methods.client.session.requestPermission, {
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
    if (this.signal.aborted || this.faultDeny) allowed = false;
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
      content = this.clientReadsFiles
        ? (await this.client.request(this.methods.client.fs.readTextFile, { sessionId: this.sessionId, path: full })).content
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

  /** Our demo's `/flood N [BYTES]`: N chunks of the repeated alphabet. */
  async flood(arg) {
    const words = arg.trim().split(/\s+/).filter(Boolean);
    const count = Number.parseInt(words[0] ?? "", 10);
    const bytes = words.length > 1 ? Number.parseInt(words[1], 10) : FLOOD_DEFAULT_BYTES;
    if (!(count >= 0) || !(bytes >= 0 && bytes <= FLOOD_MAX_BYTES) || words.length > 2) {
      return this.say(`usage: /flood N [BYTES] (BYTES up to ${FLOOD_MAX_BYTES})`);
    }
    const chunk = "abcdefghijklmnopqrstuvwxyz".repeat(Math.ceil(bytes / 26) + 1).slice(0, bytes);
    for (let sent = 1; sent <= count; sent++) {
      // Awaited: the SDK's notify waits while the connection's output buffer is full.
      await this.say(chunk);
      if (sent % FLOOD_YIELD_EVERY === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.signal.aborted) throw new Cancelled();
      }
    }
  }
}
