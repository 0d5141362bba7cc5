// ACP agent peer served over the network by the official TypeScript SDK's experimental
// transports (`@agentclientprotocol/sdk/experimental/server` + `.../experimental/node`):
// Streamable HTTP (POST + SSE) and WebSocket on one endpoint, `/acp`.
//
// Usage: node agent.mjs [--listen HOST:PORT]      (default 127.0.0.1:0)
//
// Prints one stdout line `listening http://HOST:PORT/acp` once it accepts connections, as
// `acp-cli --acp --listen` does; the WebSocket is at ws://HOST:PORT/acp. Each connection gets
// its own agent (the SDK's `createAgent`), whose turns are those of the stdio peer
// (../ts/demo-turn.mjs, imported; tests/interop/README.md, "What an agent peer does"):
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

import { createServer } from "node:http";
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";
import { ASK_USER, runTurn } from "../ts/demo-turn.mjs";

/** sessionId -> { cwd, cancel }: shared by every connection, so ids stay unique. */
const sessions = new Map();
let nextSession = 0;

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
      return runTurn(client, params, session, {
        methods: acp.methods,
        clientReadsFiles,
        flood: true,
        faultDeny: false,
      });
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
