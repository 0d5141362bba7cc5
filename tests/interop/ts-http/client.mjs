// ACP client peer over the network on the official TypeScript SDK's experimental transports
// (`@agentclientprotocol/sdk/experimental/ws-client` and `.../experimental/http-client`).
//
// Usage: node client.mjs --url URL [--transport ws|http] [--token-file FILE] --prompt TEXT
//
// URL is the agent's endpoint (`http://HOST:PORT/acp` or `ws://HOST:PORT/acp`); --transport
// picks WebSocket or Streamable HTTP (POST + SSE) whatever the URL's scheme says (default: the
// scheme's). With --token-file the file's trimmed content goes as `Authorization: Bearer`.
//
// It behaves as the stdio peers' one-prompt mode (tests/interop/README.md, "One prompt"):
// initialize (no fs, no terminal), session/new in the current directory (symlinks resolved),
// the prompt; every agent_message_chunk's text to stdout as it arrives; each permission
// request answered with its `allow_once` option (else the first allow option, else the first
// option) and reported on stderr as `permission: <title> -> <optionId>`; then a newline and
// `stop reason: <stopReason>`. Exit 0 on end_turn, 1 on any other stop reason; an error
// answer or a disconnect prints `FAIL prompt: …` and exits 1. A global 30 s timeout exits 1.

import { readFileSync, realpathSync } from "node:fs";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const GLOBAL_TIMEOUT_MS = 30_000;
const USAGE = "usage: client.mjs --url URL [--transport ws|http] [--token-file FILE] --prompt TEXT";

function parseArgs(argv) {
  const opts = { url: null, transport: null, tokenFile: null, prompt: null };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case "--url":
        opts.url = value;
        break;
      case "--transport":
        opts.transport = value;
        break;
      case "--token-file":
        opts.tokenFile = value;
        break;
      case "--prompt":
        opts.prompt = value;
        break;
      default:
        return null;
    }
    if (value === undefined) return null;
    i++;
  }
  if (!opts.url || opts.prompt === null) return null;
  if (opts.transport === null) opts.transport = /^wss?:/.test(opts.url) ? "ws" : "http";
  if (!["ws", "http"].includes(opts.transport)) return null;
  return opts;
}

/** The URL with the scheme the transport needs (ws <-> http, wss <-> https). */
function withScheme(url, transport) {
  const parsed = new URL(url);
  const secure = parsed.protocol === "https:" || parsed.protocol === "wss:";
  parsed.protocol = transport === "ws" ? (secure ? "wss:" : "ws:") : secure ? "https:" : "http:";
  return parsed.toString();
}

function chooseOption(options) {
  return (
    options.find((o) => o.optionId === "allow_once") ??
    options.find((o) => o.kind === "allow_once" || o.kind === "allow_always") ??
    options[0]
  );
}

const app = acp
  .client({ name: "net-client-ts" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") {
      process.stdout.write(update.content.text);
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    const option = chooseOption(params.options);
    const chosen = option ? option.optionId : "cancelled";
    console.error(`permission: ${params.toolCall.title} -> ${chosen}`);
    if (!option) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

async function onePrompt(cx, text) {
  await cx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "net-client-ts", title: "TypeScript SDK network peer client", version: "0.0.0" },
  });
  const session = await cx.request(acp.methods.agent.session.new, { cwd: realpathSync(process.cwd()), mcpServers: [] });
  const response = await cx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text }],
  });
  console.log(`\nstop reason: ${response.stopReason}`);
  return response.stopReason === "end_turn" ? 0 : 1;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!opts) {
    console.error(USAGE);
    return 2;
  }
  const headers = {};
  if (opts.tokenFile) headers.Authorization = `Bearer ${readFileSync(opts.tokenFile, "utf8").trim()}`;
  const url = withScheme(opts.url, opts.transport);
  const stream =
    opts.transport === "ws" ? createWebSocketStream(url, { WebSocket, headers }) : createHttpStream(url, { headers });
  try {
    return await app.connectWith(stream, (cx) => onePrompt(cx, opts.prompt));
  } catch (error) {
    const why = error?.message ?? String(error);
    const data = error?.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
    console.log(`\nFAIL prompt: ${why}${data}`);
    return 1;
  }
}

const deadline = setTimeout(() => {
  console.log(`FAIL timeout: no result within ${GLOBAL_TIMEOUT_MS / 1000} s`);
  process.exit(1);
}, GLOBAL_TIMEOUT_MS);
deadline.unref();
main().then((code) => process.exit(code));
