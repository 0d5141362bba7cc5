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
// The commands are those of demo-turn.mjs (shared with the network peer) without /flood.
// After every session/new answer it advertises these commands
// (available_commands_update), so a client, and `acp-cli conform`, can drive them.
//
// Run: node agent.mjs   (speaks ACP over stdin/stdout)

import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { ASK_USER, runTurn } from "./demo-turn.mjs";

const ADVERTISED = [
  { name: "echo", description: "Say TEXT back as one agent message", input: { hint: "TEXT" } },
  { name: "tool", description: "A tool call that asks for permission first", input: { hint: "KIND TITLE" } },
  { name: "read", description: "Read a file (through the client when it offers fs)", input: { hint: "PATH" } },
  { name: "ask", description: "Ask the user a question (_agentao.cn/ask_user)", input: { hint: "QUESTION" } },
  { name: "sleep", description: "Wait MS milliseconds; session/cancel ends the wait", input: { hint: "MS" } },
];

// Self-check of the client peers (run-peers.sh): PEER_AGENT_FAULT=deny makes every
// /tool fail even when allowed, so a client that does not notice is caught.
const FAULT_DENY = process.env.PEER_AGENT_FAULT === "deny";

/** sessionId -> { cwd, cancel: AbortController of the running turn } */
const sessions = new Map();
let clientReadsFiles = false;
let nextSession = 0;

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
    return runTurn(client, params, session, {
      methods: acp.methods,
      clientReadsFiles,
      flood: false,
      faultDeny: FAULT_DENY,
    });
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
