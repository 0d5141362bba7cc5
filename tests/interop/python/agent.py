"""ACP agent peer on the official Python SDK (`agent-client-protocol`).

A small subset of the demo backend (the top README, "The demo commands"), so
our client can be tested against a real SDK agent:

  /echo TEXT          one agent_message_chunk with TEXT
  /tool KIND TITLE    tool_call pending -> session/request_permission ->
                      in_progress + completed (allowed) or failed (rejected)
  /read PATH          fs/read_text_file when the client offers it, otherwise a
                      local read; reports the byte count
  /ask QUESTION       `_agentao.cn/ask_user`; echoes the answer
  /sleep MS           waits; session/cancel ends the wait -> stopReason cancelled

After every session/new answer it advertises these commands
(available_commands_update), so a client, and `acp-cli conform`, can drive them.

Run: python agent.py   (speaks ACP over stdin/stdout)
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import acp
from acp import (
    PROTOCOL_VERSION,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    start_tool_call,
)
from acp.helpers import update_available_commands
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

ASK_USER = "_agentao.cn/ask_user"
USER_UNAVAILABLE = "(user unavailable)"
COMMANDS = "/echo TEXT, /tool KIND TITLE, /read PATH, /ask QUESTION, /sleep MS"
# Self-check of the client peers (run-peers.sh): PEER_AGENT_FAULT=deny makes every
# /tool fail even when allowed, so a client that does not notice is caught.
FAULT_DENY = os.environ.get("PEER_AGENT_FAULT") == "deny"
# (name, description, input hint) of each command, as advertised after session/new.
ADVERTISED = [
    ("echo", "Say TEXT back as one agent message", "TEXT"),
    ("tool", "A tool call that asks for permission first", "KIND TITLE"),
    ("read", "Read a file (through the client when it offers fs)", "PATH"),
    ("ask", "Ask the user a question (_agentao.cn/ask_user)", "QUESTION"),
    ("sleep", "Wait MS milliseconds; session/cancel ends the wait", "MS"),
]
PERMISSION_KINDS = [
    ("allow_once", "Allow once"),
    ("allow_always", "Allow always"),
    ("reject_once", "Reject once"),
    ("reject_always", "Reject always"),
]


class Session:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.cancelled = asyncio.Event()


class Cancelled(Exception):
    """The turn was cancelled by session/cancel."""


class PeerAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, Session] = {}
        self.client_reads_files = False
        self.next_session = 0
        self.next_tool_call = 0
        self.background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **_: Any):
        fs = getattr(client_capabilities, "fs", None)
        self.client_reads_files = bool(fs and fs.read_text_file)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="peer-agent-python", title="Python SDK peer agent", version="0.0.0"),
            auth_methods=[],
            field_meta={"_agentao.cn/extensions": [ASK_USER]},
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        self.next_session += 1
        session_id = f"py-session-{self.next_session}"
        self.sessions[session_id] = Session(cwd)
        # The commands go after the answer: the SDK queues the answer before this task first
        # runs (nothing between the handler's return and the queueing waits).
        task = asyncio.get_running_loop().create_task(self.advertise(session_id))
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return NewSessionResponse(session_id=session_id)

    async def advertise(self, session_id: str) -> None:
        commands = [
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)),
            )
            for name, description, hint in ADVERTISED
        ]
        try:
            await self.conn.session_update(session_id=session_id, update=update_available_commands(commands))
        except ConnectionError:
            pass  # the client left first

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancelled.set()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_request({"details": f"unknown sessionId: {session_id}"})
        session.cancelled.clear()
        lines = [line for block in prompt if getattr(block, "type", None) == "text" for line in block.text.splitlines()]
        try:
            for line in lines:
                if session.cancelled.is_set():
                    raise Cancelled
                await self.run_line(session_id, session, line)
        except Cancelled:
            return PromptResponse(stop_reason="cancelled")
        if session.cancelled.is_set():
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=update_agent_message_text(text))

    async def run_line(self, session_id: str, session: Session, line: str) -> None:
        if not line.startswith("/"):
            if line.strip():
                await self.say(session_id, line)
            return
        command, _, rest = line.partition(" ")
        if command == "/echo":
            await self.say(session_id, rest)
        elif command == "/tool":
            kind, _, title = rest.partition(" ")
            await self.tool(session_id, session, kind or "other", title or "tool")
        elif command == "/read":
            await self.read(session_id, session, rest.strip())
        elif command == "/ask":
            await self.ask(session_id, rest)
        elif command == "/sleep":
            await self.sleep(session, rest.strip())
        else:
            await self.say(session_id, f"unknown command {command}; commands: {COMMANDS}")

    def new_tool_call_id(self) -> str:
        self.next_tool_call += 1
        return f"call-{self.next_tool_call}"

    async def tool(self, session_id: str, session: Session, kind: str, title: str) -> None:
        call_id = self.new_tool_call_id()
        await self.conn.session_update(
            session_id=session_id, update=start_tool_call(call_id, title, kind=kind, status="pending")
        )
        options = [PermissionOption(option_id=option_id, name=name, kind=option_id) for option_id, name in PERMISSION_KINDS]
        request = asyncio.ensure_future(
            self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id=call_id, title=title, kind=kind, status="pending"),
                options=options,
            )
        )
        cancel = asyncio.ensure_future(session.cancelled.wait())
        await asyncio.wait({request, cancel}, return_when=asyncio.FIRST_COMPLETED)
        cancel.cancel()
        allowed = False
        if request.done() and not request.cancelled() and request.exception() is None:
            outcome = request.result().outcome
            allowed = outcome.outcome == "selected" and outcome.option_id in ("allow_once", "allow_always")
        else:
            request.cancel()
        if session.cancelled.is_set() or FAULT_DENY:
            allowed = False
        if not allowed:
            await self.conn.session_update(session_id=session_id, update=update_tool_call(call_id, status="failed"))
            if session.cancelled.is_set():
                raise Cancelled
            return
        await self.conn.session_update(session_id=session_id, update=update_tool_call(call_id, status="in_progress"))
        await self.conn.session_update(
            session_id=session_id,
            update=update_tool_call(call_id, status="completed", content=[tool_content(text_block(f"{title}: done"))]),
        )

    async def read(self, session_id: str, session: Session, path: str) -> None:
        full = path if os.path.isabs(path) else os.path.join(session.cwd, path)
        call_id = self.new_tool_call_id()
        await self.conn.session_update(
            session_id=session_id, update=start_tool_call(call_id, f"Read {path}", kind="read", status="pending")
        )
        try:
            if self.client_reads_files:
                content = (await self.conn.read_text_file(session_id=session_id, path=full)).content
            else:
                with open(full, encoding="utf-8") as f:
                    content = f.read()
        except Exception as exc:  # the client's error or a local I/O error fails the tool call
            await self.conn.session_update(
                session_id=session_id,
                update=update_tool_call(call_id, status="failed", content=[tool_content(text_block(str(exc)))]),
            )
            return
        size = len(content.encode("utf-8"))
        report = f"read {size} bytes from {path}"
        await self.conn.session_update(
            session_id=session_id,
            update=update_tool_call(call_id, status="completed", content=[tool_content(text_block(report))]),
        )
        await self.say(session_id, report)

    async def ask(self, session_id: str, question: str) -> None:
        # The SDK's ext_method prefixes "_" itself: pass the name without it.
        try:
            answer = await self.conn.ext_method(ASK_USER[1:], {"sessionId": session_id, "question": question})
        except Exception:
            answer = None
        text = USER_UNAVAILABLE
        if isinstance(answer, dict) and answer.get("outcome") == "answered":
            if isinstance(answer.get("text"), str) and answer["text"]:
                text = answer["text"]
        await self.say(session_id, text)

    async def sleep(self, session: Session, arg: str) -> None:
        try:
            millis = max(0, min(int(arg), 600_000))
        except ValueError:
            millis = 0
        try:
            await asyncio.wait_for(session.cancelled.wait(), millis / 1000)
        except asyncio.TimeoutError:
            return
        raise Cancelled

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found("_" + method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def main() -> None:
    await acp.run_agent(PeerAgent())


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
