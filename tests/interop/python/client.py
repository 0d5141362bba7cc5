"""ACP client peer on the official Python SDK (`agent-client-protocol`).

Usage: python client.py -- AGENT [ARGS...]
       python client.py --prompt TEXT -- AGENT [ARGS...]

Drives the agent through a scenario of demo-backend commands (the top README,
"The demo commands") and prints `ok <step>` per step, `FAIL <step>: <why>` on
the first failure (exit 1), and `N passed, 0 failed` at the end.
A global 30 s timeout exits 1.

With `--prompt TEXT` it sends that one prompt instead, in a session whose cwd is
the current directory, for any backend (the llm backend's tests): see
tests/interop/README.md, "One prompt".
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from typing import Any

import acp
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from acp.stdio import spawn_agent_process

ASK_USER = "_agentao.cn/ask_user"
FILE_TEXT = "interop peer file, plain ASCII text.\n"
GLOBAL_TIMEOUT_S = 30.0
STEPS = ["initialize", "session/new", "tool allow_once", "tool reject_once", "ask", "read", "cancel"]


class StepFailed(Exception):
    def __init__(self, step: str, why: str) -> None:
        super().__init__(f"{step}: {why}")
        self.step = step
        self.why = why


class PeerClient:
    """Answers the agent's requests as the current step wants, and records them."""

    def __init__(self) -> None:
        self.permission_answer = "allow_once"
        self.ask_answer = "Ada"
        self.updates: list[Any] = []
        self.first_update = asyncio.Event()
        self.permission_requests: list[Any] = []
        self.reads: list[str] = []
        self.questions: list[dict[str, Any]] = []

    def begin_turn(self) -> None:
        self.updates = []
        self.first_update = asyncio.Event()
        self.permission_requests = []
        self.reads = []
        self.questions = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.first_update.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any):
        self.permission_requests.append((tool_call, options))
        ids = [option.option_id for option in options]
        if self.permission_answer not in ids:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.permission_answer, outcome="selected"))

    async def read_text_file(self, session_id: str, path: str, line: Any = None, limit: Any = None, **_: Any):
        self.reads.append(path)
        with open(path, encoding="utf-8") as f:
            return ReadTextFileResponse(content=f.read())

    async def write_text_file(self, *args: Any, **kwargs: Any):
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        # The SDK strips the leading "_" of extension methods before calling us.
        if "_" + method == ASK_USER:
            self.questions.append(params)
            return {"outcome": "answered", "text": self.ask_answer}
        raise acp.RequestError.method_not_found("_" + method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def texts(updates: list[Any], kinds: tuple[str, ...]) -> list[str]:
    """Text of the updates of the given kinds (message chunks and tool call contents)."""
    out: list[str] = []
    for update in updates:
        kind = getattr(update, "session_update", None)
        if kind not in kinds:
            continue
        content = getattr(update, "content", None)
        if kind == "agent_message_chunk":
            if getattr(content, "type", None) == "text":
                out.append(content.text)
        else:
            for item in content or []:
                inner = getattr(item, "content", None)
                if getattr(inner, "type", None) == "text":
                    out.append(inner.text)
    return out


def tool_statuses(updates: list[Any]) -> list[str]:
    return [u.status for u in updates if getattr(u, "session_update", None) == "tool_call_update" and u.status]


class Run:
    def __init__(self, conn: Any, client: PeerClient) -> None:
        self.conn = conn
        self.client = client
        self.passed = 0

    def ok(self, step: str) -> None:
        self.passed += 1
        print(f"ok {step}", flush=True)

    async def prompt(self, session_id: str, text: str) -> Any:
        self.client.begin_turn()
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])

    async def tool_step(self, step: str, session_id: str, answer: str, want: str) -> None:
        self.client.permission_answer = answer
        response = await self.prompt(session_id, "/tool edit Fix")
        if len(self.client.permission_requests) != 1:
            raise StepFailed(step, f"expected 1 permission request, got {len(self.client.permission_requests)}")
        tool_call, options = self.client.permission_requests[0]
        ids = sorted(option.option_id for option in options)
        if ids != sorted(["allow_once", "allow_always", "reject_once", "reject_always"]):
            raise StepFailed(step, f"permission options were {ids}")
        starts = [u for u in self.client.updates if getattr(u, "session_update", None) == "tool_call"]
        if not starts or starts[0].tool_call_id != tool_call.tool_call_id:
            raise StepFailed(step, "permission request does not name the announced tool_call")
        statuses = tool_statuses(self.client.updates)
        if want not in statuses:
            raise StepFailed(step, f"expected a tool_call_update {want}, got statuses {statuses}")
        if response.stop_reason != "end_turn":
            raise StepFailed(step, f"stopReason {response.stop_reason}")
        self.ok(step)

    async def scenario(self, work_dir: str, file_path: str) -> None:
        step = "initialize"
        init = await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=False), terminal=False
            ),
            client_info=Implementation(name="peer-client-python", title="Python SDK peer client", version="0.0.0"),
        )
        if init.protocol_version != 1:
            raise StepFailed(step, f"protocolVersion {init.protocol_version}")
        self.ok(step)

        step = "session/new"
        session = await self.conn.new_session(cwd=work_dir, mcp_servers=[])
        if not session.session_id:
            raise StepFailed(step, "empty sessionId")
        session_id = session.session_id
        self.ok(step)

        await self.tool_step("tool allow_once", session_id, "allow_once", "completed")
        await self.tool_step("tool reject_once", session_id, "reject_once", "failed")

        step = "ask"
        self.client.ask_answer = "Ada"
        response = await self.prompt(session_id, "/ask Your name?")
        if [q.get("question") for q in self.client.questions] != ["Your name?"]:
            raise StepFailed(step, f"ask_user requests were {self.client.questions}")
        if self.client.questions[0].get("sessionId") != session_id:
            raise StepFailed(step, "ask_user sessionId does not match")
        said = texts(self.client.updates, ("agent_message_chunk",))
        if not any("Ada" in t for t in said):
            raise StepFailed(step, f"no agent_message_chunk with the answer, got {said}")
        if response.stop_reason != "end_turn":
            raise StepFailed(step, f"stopReason {response.stop_reason}")
        self.ok(step)

        step = "read"
        response = await self.prompt(session_id, f"/read {file_path}")
        if self.client.reads != [file_path]:
            raise StepFailed(step, f"fs/read_text_file calls were {self.client.reads}")
        size = str(len(FILE_TEXT.encode("utf-8")))
        said = texts(self.client.updates, ("agent_message_chunk", "tool_call", "tool_call_update"))
        if not any(size in t for t in said):
            raise StepFailed(step, f"no reply mentions {size} bytes, got {said}")
        if response.stop_reason != "end_turn":
            raise StepFailed(step, f"stopReason {response.stop_reason}")
        self.ok(step)

        step = "cancel"
        self.client.begin_turn()
        turn = asyncio.ensure_future(self.conn.prompt(session_id=session_id, prompt=[text_block("/sleep 10000")]))
        first = asyncio.ensure_future(self.client.first_update.wait())
        await asyncio.wait({turn, first}, timeout=0.1, return_when=asyncio.FIRST_COMPLETED)
        first.cancel()
        if turn.done():
            raise StepFailed(step, f"the turn ended before the cancel: {turn.result()}")
        await self.conn.cancel(session_id=session_id)
        try:
            response = await asyncio.wait_for(turn, 5.0)
        except asyncio.TimeoutError:
            raise StepFailed(step, "no answer within 5 s of session/cancel") from None
        if response.stop_reason != "cancelled":
            raise StepFailed(step, f"stopReason {response.stop_reason}, expected cancelled")
        self.ok(step)


class PromptClient(PeerClient):
    """The `--prompt` mode's client: streams the answer's text to stdout and allows every
    permission once, saying so on stderr."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if getattr(update, "session_update", None) == "agent_message_chunk":
            content = getattr(update, "content", None)
            if getattr(content, "type", None) == "text":
                sys.stdout.write(content.text)
                sys.stdout.flush()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        response = await super().request_permission(session_id, tool_call, options, **kwargs)
        chosen = getattr(response.outcome, "option_id", "cancelled")
        print(f"permission: {tool_call.title} -> {chosen}", file=sys.stderr, flush=True)
        return response


async def run_prompt(agent: list[str], text: str) -> int:
    """One prompt in a new session in the current directory; exit 0 on `end_turn`."""
    client = PromptClient()
    work_dir = os.path.realpath(os.getcwd())
    async with spawn_agent_process(
        client, agent[0], *agent[1:], env=dict(os.environ), transport_kwargs={"stderr": None}
    ) as (conn, _process):
        try:
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False
                ),
                client_info=Implementation(name="peer-client-python", title="Python SDK peer client", version="0.0.0"),
            )
            session = await conn.new_session(cwd=work_dir, mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
        except Exception as exc:  # an error response or a disconnect
            print(f"\nFAIL prompt: {type(exc).__name__}: {exc}", flush=True)
            return 1
        print(f"\nstop reason: {response.stop_reason}", flush=True)
        return 0 if response.stop_reason == "end_turn" else 1


async def run(agent: list[str]) -> int:
    client = PeerClient()
    with tempfile.TemporaryDirectory(prefix="acp-interop-") as work_dir:
        work_dir = os.path.realpath(work_dir)
        file_path = os.path.join(work_dir, "hello.txt")
        with open(file_path, "w", encoding="utf-8") as f:
            f.write(FILE_TEXT)
        async with spawn_agent_process(
            client, agent[0], *agent[1:], env=dict(os.environ), transport_kwargs={"stderr": None}
        ) as (conn, _process):
            runner = Run(conn, client)
            try:
                await runner.scenario(work_dir, file_path)
            except StepFailed as failed:
                print(f"FAIL {failed.step}: {failed.why}", flush=True)
                return 1
            except Exception as exc:  # an SDK error (error response, disconnect) fails the run
                step = STEPS[min(runner.passed, len(STEPS) - 1)]
                print(f"FAIL {step}: {type(exc).__name__}: {exc}", flush=True)
                return 1
            print(f"{runner.passed} passed, 0 failed", flush=True)
            return 0


def main() -> int:
    args = sys.argv[1:]
    prompt = None
    if len(args) >= 2 and args[0] == "--prompt":
        prompt, args = args[1], args[2:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        print("usage: client.py [--prompt TEXT] -- AGENT [ARGS...]", file=sys.stderr)
        return 2
    job = run(args) if prompt is None else run_prompt(args, prompt)
    try:
        return asyncio.run(asyncio.wait_for(job, GLOBAL_TIMEOUT_S))
    except asyncio.TimeoutError:  # before OSError: TimeoutError is an OSError since 3.11
        print(f"FAIL timeout: no result within {GLOBAL_TIMEOUT_S:.0f} s", flush=True)
        return 1
    except OSError as exc:
        print(f"FAIL initialize: cannot start the agent: {exc}", flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
