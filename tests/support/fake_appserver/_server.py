"""The fake app-server: requests in on stdin, results and notifications out on stdout.

One asyncio loop: a reader task dispatches each request line; a turn runs
as its own task so `turn/steer`, `turn/interrupt` and `approval/resolve`
are served while it runs. Everything written goes through `_write`, which
checks it against the seed schema first (status 70 on a drift).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ._schema import notification_problem, problem

__all__ = ["main"]

PROTOCOL = "v2" if "--protocol-v2" in sys.argv else "v1"  # v2: a server corral must refuse
MODELS = "--models" in sys.argv  # says `modelList` and answers `model/list`
_REQUESTS: dict[str, tuple[str, str]] = {  # method -> (params definition, result definition)
    "initialize": ("InitializeParams", "InitializeResponse"),
    "thread/start": ("ThreadStartParams", "ThreadStartResponse"),
    "thread/resume": ("ThreadResumeParams", "ThreadSnapshotResponse"),
    "turn/start": ("TurnStartParams", "TurnStartResponse"),
    "turn/steer": ("TurnSteerParams", "TurnQueueResponse"),
    "turn/interrupt": ("TurnInterruptParams", "TurnInterruptResponse"),
    "approval/resolve": ("ApprovalResolveParams", "ApprovalResolveResponse"),
    # the seed's TurnResumeResponse refers to a `TurnStatus` it does not define: its
    # result is checked against what it says without that reference (see `_resume_problem`)
    "turn/resume": ("TurnResumeParams", ""),
    "model/list": ("ModelListParams", "ModelListResponse"),
}
LISTED = [
    {"id": "fake-small", "displayName": "Fake Small", "provider": "fake", "supportsTools": True},
    {"id": "fake-large", "supportsTools": True},
]


def _resume_problem(result: dict[str, Any]) -> str | None:
    """A `TurnResumeResponse` minus its dangling `status` reference: a string status."""
    if not isinstance(result.get("status"), str):
        return "status is not a string"
    return problem("TurnStartResponse", {k: result[k] for k in ("threadId", "turnId", "status")})


def drifted(what: str) -> None:
    """The fake was about to write something the seed schema forbids: stop loudly."""
    sys.stderr.write(f"fake app-server drifted from the seed schema: {what}\n")
    sys.stderr.flush()
    os._exit(70)


def _write(message: dict[str, Any]) -> None:
    if "method" in message and "id" not in message:
        why = notification_problem(message)
        if why is not None:
            drifted(f"{message['method']}: {why}")
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


PENDING: dict[str, asyncio.Future[dict[str, Any]]] = {}  # our requests to the client


def notify(method: str, params: dict[str, Any]) -> None:
    _write({"jsonrpc": "2.0", "method": method, "params": params})


class Turn:
    """One running turn: its ids and the channels the requests reach it by."""

    def __init__(
        self,
        thread_id: str,
        turn_id: str,
        text: str,
        opened: dict[str, Any] | None = None,
        metadata: object = None,
    ) -> None:
        self.thread_id = thread_id
        self.opened = opened  # the params of the `thread/start` that opened the thread
        self.metadata = metadata  # the `turn/start` metadata, as received
        self.turn_id = turn_id
        self.text = text
        self.steers: asyncio.Queue[str] = asyncio.Queue()
        self.interrupted = asyncio.Event()
        self.approvals: dict[str, asyncio.Future[tuple[str, str]]] = {}
        self._items = itertools.count(1)

    async def ask_client(self, method: str, params: dict[str, Any]) -> str:
        """A server request of ours; returns the client's error message (or result)."""
        request_id = f"server-{self.turn_id}"
        answered: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        PENDING[request_id] = answered
        _write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        reply = await answered
        error = reply.get("error")
        return str(error["message"]) if isinstance(error, dict) else json.dumps(reply.get("result"))

    def item(self, kind: str, status: str, payload: dict[str, Any]) -> dict[str, Any]:
        now = time.time()
        return {
            "itemId": f"{self.turn_id}-item-{next(self._items)}",
            "threadId": self.thread_id,
            "turnId": self.turn_id,
            "type": kind,
            "status": status,
            "payload": payload,
            "createdAt": now,
            "updatedAt": now,
        }

    def say(self, text: str, pieces: int = 3) -> None:
        item = self.item("agentMessage", "inProgress", {})
        notify("item/started", item)
        size = max(1, -(-len(text) // pieces))
        for start in range(0, len(text), size):
            notify("item/agentMessage/delta", {**item, "delta": text[start : start + size]})
        notify("item/completed", {**item, "status": "completed", "payload": {"text": text}})

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        call = {"toolName": name, "toolCallId": f"{self.turn_id}-call"}
        item = self.item("toolCall", "started", call)
        notify("item/started", item)
        notify("item/toolCall/delta", {**item, "status": "inProgress", "delta": arguments})
        return item

    def complete(self, status: str = "completed", checkpoint: str = "", **extra: Any) -> None:
        params: dict[str, Any] = {
            "threadId": self.thread_id,
            "turnId": self.turn_id,
            "status": status,
            "tokenUsage": {"inputTokens": 120, "outputTokens": 30},
            "checkpoint": {
                "key": f"{self.turn_id}-checkpoint",
                "resumeAttempt": 0,
                "cycleIndex": 1,
                "status": checkpoint or ("completed" if status == "completed" else "failed"),
                "terminalAcknowledged": not checkpoint,
            },
            **extra,
        }
        notify("turn/completed", params)


async def _approve(turn: Turn) -> None:
    item = turn.tool("write_file", {"path": "notes.txt", "text": "hello"})
    request_id = f"{turn.turn_id}-approval"
    decided: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
    turn.approvals[request_id] = decided
    notify(
        "approval/requested",
        {
            "requestId": request_id,
            "threadId": turn.thread_id,
            "turnId": turn.turn_id,
            "toolCallId": item["payload"]["toolCallId"],
            "toolName": "write_file",
            "preview": "write notes.txt",
            "arguments": {"path": "notes.txt", "text": "hello"},
        },
    )
    decision, reason = await decided
    allowed = decision in ("allow", "allow_session")
    payload = {
        **item["payload"],
        "output" if allowed else "error": "wrote notes.txt" if allowed else reason,
    }
    notify(
        "item/completed",
        {**item, "status": "completed" if allowed else "failed", "payload": payload},
    )
    turn.say(f"approved: {decision}" if allowed else f"denied: {reason or '(no reason)'}")
    turn.complete()


async def _slow(turn: Turn) -> None:
    item = turn.item("agentMessage", "inProgress", {})
    notify("item/started", item)
    for tick in range(1, 400):
        if turn.interrupted.is_set():
            interruption = {
                "reason": "interrupted by the client",
                "operationId": "op-1",
                "operationKind": "model",
                "cycleIndex": 1,
                "risk": "none",
                "idempotencySupport": "supported",
            }
            turn.complete("interrupted", interruption=interruption)
            return
        if not turn.steers.empty():
            steer = await turn.steers.get()
            notify("item/agentMessage/delta", {**item, "delta": f"steered: {steer}"})
            notify("item/completed", {**item, "status": "completed", "payload": {}})
            turn.complete()
            return
        notify("item/agentMessage/delta", {**item, "delta": f"tick {tick} "})
        await asyncio.sleep(0.05)
    turn.complete()


async def run_turn(turn: Turn) -> None:
    echo = turn.item("userMessage", "completed", {"text": turn.text})
    notify(
        "turn/started", {"threadId": turn.thread_id, "turnId": turn.turn_id, "status": "running"}
    )
    notify("item/completed", echo)
    text = turn.text
    if "CRASH" in text:
        turn.say("about to crash", pieces=1)
        sys.stderr.write("fake app-server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if "NOISE" in text:
        sys.stdout.buffer.write(b"this line is not JSON\n")
        sys.stdout.buffer.flush()
        turn.say("after the noise")
        turn.complete()
    elif "ASK_CLIENT" in text:
        error = await turn.ask_client("client/pickColor", {"choices": ["red", "blue"]})
        turn.say(f"the client said: {error}")
        turn.complete()
    elif "APPROVE" in text:
        await _approve(turn)
    elif "TOOL" in text:
        item = turn.tool("run_command", {"command": "echo hi"})
        notify(
            "item/completed",
            {**item, "status": "completed", "payload": {**item["payload"], "output": "hi"}},
        )
        turn.say("Tool said: hi")
        turn.complete()
    elif "SLOW" in text:
        await _slow(turn)
    elif "THREAD" in text:
        turn.say(json.dumps(turn.opened, sort_keys=True), pieces=1)
        turn.complete()
    elif "GOODBYE" in text:  # the server closes the thread mid-turn
        turn.say("closing", pieces=1)
        notify("thread/closed", {"threadId": turn.thread_id})
    elif "METADATA" in text:
        turn.say(json.dumps(turn.metadata, sort_keys=True), pieces=1)
        turn.complete()
    elif "PAUSE" in text:  # stops at a checkpoint that waits for the user
        turn.say("waiting for you", pieces=1)
        turn.complete("completed", checkpoint="wait_user")
    elif "FAIL" in text:
        turn.complete("failed", error="the model failed")
    else:
        if "WARN" in text:
            notify(
                "error/warning", {"message": "careful: this is a warning", "code": "fake_warning"}
            )
        turn.say(f"You said: {text}")
        turn.complete()


class Server:
    def __init__(self) -> None:
        self.thread_id = "thread-1"
        self.turns = itertools.count(1)
        self.turn: Turn | None = None
        self.opened: dict[str, Any] | None = None  # `thread/start` params, as received
        self.tasks: set[asyncio.Task[None]] = set()
        self.handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "initialize": self.initialize,
            "thread/start": self.thread_start,
            "thread/resume": self.thread_resume,
            "turn/start": self.turn_start,
            "turn/steer": self.turn_steer,
            "turn/interrupt": self.turn_interrupt,
            "approval/resolve": self.approval_resolve,
            "turn/resume": self.turn_resume,
            "model/list": self.model_list,
        }

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        capabilities = {
            "modelList": MODELS,
            "threadLifecycle": True,
            "notificationOptOut": False,
            "schemaExport": False,
            "approvalResolve": True,
        }
        return {
            "userAgent": "fake-appserver/1.0",
            "protocolVersion": PROTOCOL,
            "capabilities": capabilities,
        }

    async def thread_start(self, params: dict[str, Any]) -> dict[str, Any]:
        self.opened = params
        started = {
            "threadId": self.thread_id,
            "agentKey": params.get("agentKey", "default"),
            "cwd": params.get("cwd"),
            "status": "idle",
        }
        notify("thread/started", started)
        return started

    async def thread_resume(self, params: dict[str, Any]) -> dict[str, Any]:
        self.thread_id = params["threadId"]
        thread = {
            "threadId": self.thread_id,
            "agentKey": "default",
            "cwd": None,
            "createdAt": 0,
            "updatedAt": 0,
            "archivedAt": None,
            "status": "idle",
            "metadata": {},
        }
        return {"thread": thread, "turns": [], "items": []}

    async def turn_start(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.turn is not None:
            raise ValueError("Thread already has an active turn")
        texts = [i.get("text", "") for i in params.get("input", []) if i.get("type") == "text"]
        turn_id = f"turn-{next(self.turns)}"
        turn = Turn(self.thread_id, turn_id, " ".join(texts), self.opened, params.get("metadata"))
        self.turn = turn
        task = asyncio.get_running_loop().create_task(self._run(turn))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return {"threadId": self.thread_id, "turnId": turn.turn_id, "status": "running"}

    async def model_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"models": LISTED}

    async def turn_resume(self, params: dict[str, Any]) -> dict[str, Any]:
        """Takes up a `<turn>-checkpoint` key: the turn says so and completes."""
        if self.turn is not None:
            raise ValueError("Thread already has an active turn")
        turn_id, key = params["turnId"], params["checkpointKey"]
        if key != f"{turn_id}-checkpoint":
            raise ValueError(f"unknown checkpoint {key}")
        turn = Turn(self.thread_id, turn_id, "", self.opened)
        self.turn = turn
        task = asyncio.get_running_loop().create_task(self._resumed(turn, key))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return {
            "threadId": self.thread_id,
            "turnId": turn_id,
            "runId": "run-2",
            "status": "running",
        }

    async def _resumed(self, turn: Turn, key: str) -> None:
        await asyncio.sleep(0)  # the turn/resume result goes out first
        try:
            notify("turn/started", {"threadId": turn.thread_id, "turnId": turn.turn_id})
            turn.say(f"resumed {key}", pieces=1)
            turn.complete()
        finally:
            self.turn = None

    async def _run(self, turn: Turn) -> None:
        await asyncio.sleep(0)  # the turn/start result goes out first
        try:
            await run_turn(turn)
        finally:
            self.turn = None

    def _active(self, params: dict[str, Any]) -> Turn:
        turn = self.turn
        if turn is None:
            raise ValueError("no active turn")
        expected = params.get("expectedTurnId")
        if expected and expected != turn.turn_id:
            raise ValueError("turn id mismatch")
        return turn

    async def turn_steer(self, params: dict[str, Any]) -> dict[str, Any]:
        turn = self._active(params)
        texts = [i.get("text", "") for i in params.get("input", []) if i.get("type") == "text"]
        turn.steers.put_nowait(" ".join(texts))
        return {"threadId": turn.thread_id, "turnId": turn.turn_id, "queued": True}

    async def turn_interrupt(self, params: dict[str, Any]) -> dict[str, Any]:
        turn = self._active(params)
        turn.interrupted.set()
        return {"threadId": turn.thread_id, "turnId": turn.turn_id, "cancelled": True}

    async def approval_resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        turn = self._active({"expectedTurnId": params["turnId"]})
        decided = turn.approvals.pop(params["requestId"], None)
        if decided is None:
            raise ValueError("Unknown approval requestId")
        notify("approval/resolved", params)
        decided.set_result((params["decision"], params.get("reason", "")))
        return {}

    async def handle(self, message: dict[str, Any]) -> None:
        method, request_id = message.get("method"), message.get("id")
        if method is None and request_id in PENDING:
            PENDING.pop(request_id).set_result(message)  # the client answered us
            return
        if request_id is None:
            return  # notifications from the client (`initialized`)
        handler = self.handlers.get(str(method))
        if handler is None:
            _write(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": f"no {method}"},
                }
            )
            return
        params_def, result_def = _REQUESTS[str(method)]
        params = message.get("params", {})
        why = problem(params_def, params)
        if why is not None:
            error = {"code": -32602, "message": f"{method}: {why}"}
            _write({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        try:
            result = await handler(params)
        except ValueError as refused:
            _write(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32602, "message": str(refused)},
                }
            )
            return
        why = problem(result_def, result) if result_def else _resume_problem(result)
        if why is not None and not (method == "initialize" and PROTOCOL != "v1"):
            drifted(f"{method} result: {why}")
        _write({"jsonrpc": "2.0", "id": request_id, "result": result})


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    server = Server()
    while line := await reader.readline():
        if line.strip():
            await server.handle(json.loads(line))
