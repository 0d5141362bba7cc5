// ACP agent peer served over the network by the official TypeScript SDK's experimental
// transports (`@agentclientprotocol/sdk/experimental/server` + `.../experimental/node`):
// Streamable HTTP (POST + SSE) and WebSocket on one endpoint, `/acp`.
//
// Usage: node agent.mjs [--listen HOST:PORT]      (default 127.0.0.1:0)
//
// Prints one stdout line `listening http://HOST:PORT/acp` once it accepts connections, as
// `acp-cli --acp --listen` does; the WebSocket is at ws://HOST:PORT/acp. Each connection gets
// its own agent (the SDK's `createAgent`), which serves the same commands as the stdio peer
// (../ts/agent.mjs; tests/interop/README.md, "What an agent peer does"):
//
//   /echo TEXT          one agent_message_chunk with TEXT
//   /tool KIND TITLE    tool_call pending -> session/request_permission ->
//                       in_progress + completed (allowed) or failed (rejected)
//   /read PATH          fs/read_text_file when the client offers it, otherwise a local read
//   /ask QUESTION       `_agentao.cn/ask_user`; echoes the answer
//   /sleep MS           waits; session/cancel ends the wait -> stopReason cancelled
//   /flood N [BYTES]    N agent_message_chunks of BYTES bytes (default 32), as our demo's /flood
//
// Any other text is echoed. It runs until killed.

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { isAbsolute, join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

const ASK_USER = "_agentao.cn/ask_user";
const USER_UNAVAILABLE = "(user unavailable)";
const COMMANDS = "/echo TEXT, /tool KIND TITLE, /read PATH, /ask QUESTION, /sleep MS, /flood N [BYTES]";
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

class Cancelled extends Error {}

/** sessionId -> { cwd, cancel }: shared by every connection, so ids stay unique. */
const sessions = new Map();
let nextSession = 0;
let nextToolCall = 0;

function aborted(signal) {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

class Turn {
  constructor(client, sessionId, session, signal, clientReadsFiles) {
    this.client = client;
    this.sessionId = sessionId;
    this.session = session;
    this.signal = signal;
    this.clientReadsFiles = clientReadsFiles;
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
      case "/flood":
        return this.flood(rest);
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
    if (this.signal.aborted) allowed = false;
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

/** One agent per accepted connection. */
function createAgent() {
  let clientReadsFiles = false;
  return acp
    .agent({ name: "net-agent-ts" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientReadsFiles = params.clientCapabilities?.fs?.readTextFile === true;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {},
        authMethods: [],
        agentInfo: { name: "net-agent-ts", title: "TypeScript SDK network peer agent", version: "0.0.0" },
        _meta: { "_agentao.cn/extensions": [ASK_USER] },
      };
    })
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      const sessionId = `ts-net-session-${++nextSession}`;
      sessions.set(sessionId, { cwd: params.cwd, cancel: null });
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
      const turn = new Turn(client, params.sessionId, session, cancel.signal, clientReadsFiles);
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
}

function parseListen(args) {
  let listen = "127.0.0.1:0";
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--listen" && i + 1 < args.length) listen = args[++i];
    else {
      console.error(`usage: agent.mjs [--listen HOST:PORT]`);
      process.exit(2);
    }
  }
  const at = listen.lastIndexOf(":");
  return { host: listen.slice(0, at).replace(/^\[|\]$/g, ""), port: Number.parseInt(listen.slice(at + 1), 10) };
}

const { host, port } = parseListen(process.argv.slice(2));
const acpServer = new AcpServer({ createAgent });
const httpHandler = createNodeHttpHandler(acpServer);
const webSockets = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(acpServer, webSockets);
const server = createServer((req, res) => {
  if (new URL(req.url ?? "/", "http://localhost").pathname !== "/acp") {
    res.writeHead(404).end();
    return;
  }
  httpHandler(req, res);
});
server.on("upgrade", (req, socket, head) => {
  if (new URL(req.url ?? "/", "http://localhost").pathname !== "/acp") {
    socket.destroy();
    return;
  }
  upgrade(req, socket, head);
});
server.listen(port, host, () => {
  const address = server.address();
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  console.log(`listening http://${shown}:${address.port}/acp`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    void acpServer.close().finally(() => process.exit(0));
  });
}
