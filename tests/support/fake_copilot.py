"""A fake `copilot --headless --stdio`, run as a real subprocess: `python -m tests.support.fake_copilot`.

It speaks Copilot's SDK server wire (JSON-RPC 2.0 framed by
`Content-Length`): `connect`, `session.create` / `session.resume`,
`session.send`, `session.abort`, and it sends `session.event`
notifications of the seed's `SessionEvent` shapes. The prompt's text
picks the turn (first word):

    WAIT <type>   emits a `<type>` event (`elicitation.requested`,
                  `exit_plan_mode.requested`, ...) with requestId `req-1`
                  and waits for a call that resolves `req-1`; then says
                  "resolved by <method> <params as JSON>" and goes idle.
                  The wait is bounded (30 s) so a test never hangs forever:
                  without an answer the turn says "never resolved".
    CLIENT        sends the server request `client/pickColor` and says the
                  error code of the answer
    OPENED        says the `session.create` (or resume) params as JSON
    PLAN          signals `session.plan_changed` (create) and
                  `session.todos_changed`, then says "planned"; the plan
                  and todos are read with `session.plan.read` and
                  `session.plan.readSqlTodos`
    anything      "You said: <text>"

Every turn is `user.message`, `assistant.turn_start`, message deltas,
`assistant.message`, `assistant.turn_end`, `session.idle`.

Settings, as Copilot 1.0.102 answers them: `session.create` says the mode
(`interactive`) and model (`fake-model`); `session.model.list` lists
`fake-model` and `fake-other`; `session.model.switchTo` and
`session.mode.set` emit `session.model_change` / `session.mode_changed`
before answering (a model it does not list is refused);
`session.history.compact` emits `session.compaction_start` and
`session.compaction_complete` before answering (after `NOTHING` was said,
it fails as Copilot does: "Nothing to compact.").
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any

_WAIT_LIMIT = 30.0


class FakeCopilot:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ids = itertools.count(1)
        self.events = itertools.count(1)
        self.opened: dict[str, Any] = {}
        self.resolved: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.turns: set[asyncio.Task[None]] = set()
        self.mode = "interactive"
        self.model = "fake-model"
        self.nothing_to_compact = False

    async def write(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.writer.drain()

    async def read(self) -> dict[str, Any] | None:
        length = None
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        assert length is not None
        message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
        return message

    async def event(self, event_type: str, data: dict[str, Any]) -> None:
        envelope = {
            "id": f"00000000-0000-4000-8000-{next(self.events):012d}",
            "timestamp": "2026-12-01T00:00:00.000Z",
            "parentId": None,
            "type": event_type,
            "data": data,
        }
        params = {"sessionId": "fake-session", "event": envelope}
        await self.write({"method": "session.event", "params": params})

    async def say(self, prompt: str, text: str) -> None:
        await self.event("user.message", {"content": prompt})
        await self.event("assistant.turn_start", {"turnId": "0"})
        await self.event("assistant.message_delta", {"messageId": "m1", "deltaContent": text})
        await self.event("assistant.message", {"messageId": "m1", "content": text})
        await self.event("assistant.turn_end", {"turnId": "0"})
        await self.event("session.idle", {})

    async def turn(self, prompt: str) -> None:
        word, _, rest = prompt.partition(" ")
        if word == "WAIT":
            await self.event("user.message", {"content": prompt})
            await self.event("assistant.turn_start", {"turnId": "0"})
            await self.event(rest.strip(), _request_data(rest.strip()))
            try:
                async with asyncio.timeout(_WAIT_LIMIT):
                    method, params = await self.resolved.get()
                text = f"resolved by {method} {json.dumps(params, sort_keys=True)}"
            except TimeoutError:
                text = "never resolved"
            await self.event("assistant.message_delta", {"messageId": "m1", "deltaContent": text})
            await self.event("assistant.message", {"messageId": "m1", "content": text})
            await self.event("assistant.turn_end", {"turnId": "0"})
            await self.event("session.idle", {})
        elif word == "CLIENT":
            rpc_id = 9000 + next(self.ids)
            waiting = asyncio.get_running_loop().create_future()
            self.replies[rpc_id] = waiting
            await self.write({"id": rpc_id, "method": "client/pickColor", "params": {}})
            answer = await waiting
            await self.say(prompt, f"client error {answer.get('error', {}).get('code')}")
        elif word == "PLAN":
            await self.event("session.plan_changed", {"operation": "create"})
            await self.event("session.todos_changed", {})
            await self.say(prompt, "planned")
        elif word == "NOTHING":
            self.nothing_to_compact = True
            await self.say(prompt, "nothing")
        elif word == "OPENED":
            await self.say(prompt, json.dumps(self.opened, sort_keys=True))
        else:
            await self.say(prompt, f"You said: {prompt}")

    async def serve(self) -> None:
        while (message := await self.read()) is not None:
            if "method" not in message:  # an answer to our request
                waiting = self.replies.pop(message.get("id"), None)  # type: ignore[arg-type]
                if waiting is not None:
                    waiting.set_result(message)
                continue
            await self.handle(message)

    async def handle(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        result: Any = {}
        if method == "connect":
            result = {"version": "fake-copilot-1"}
        elif method in ("session.create", "session.resume"):
            self.opened = {k: v for k, v in params.items() if k != "workingDirectory"}
            result = {
                "sessionId": params.get("sessionId", "fake-session"),
                "mode": self.mode,
                "modelState": {"modelId": self.model},
            }
        elif method == "session.send":
            task = asyncio.get_running_loop().create_task(self.turn(str(params.get("prompt"))))
            self.turns.add(task)
            task.add_done_callback(self.turns.discard)
        elif params.get("requestId") == "req-1":
            self.resolved.put_nowait((method, {k: v for k, v in params.items()}))
        elif method.startswith(("session.model.", "session.mode.", "session.history.")):
            answer = await self.setting(method, params)
            if isinstance(answer, str):
                error = {"code": -32603, "message": answer}
                await self.write({"id": message["id"], "error": error})
                return
            result = answer
        elif method in PLAN_READS:
            result = PLAN_READS[method]
        await self.write({"id": message["id"], "result": result})

    async def setting(self, method: str, params: dict[str, Any]) -> dict[str, Any] | str:
        """The settings calls; a string is the error Copilot answers."""
        if method == "session.model.list":
            return {"list": [{"id": m, "name": m.title()} for m in MODELS], "quotaSnapshots": {}}
        if method == "session.model.switchTo":
            if params["modelId"] not in MODELS:
                return f"unknown model {params['modelId']}"
            change = {"previousModel": self.model, "newModel": params["modelId"], "source": "sdk"}
            self.model = params["modelId"]
            await self.event("session.model_change", change)
            return {"status": "applied", "modelId": self.model}
        if method == "session.mode.set":
            if params["mode"] != self.mode:  # as Copilot: no event for the mode it is in
                change = {"previousMode": self.mode, "newMode": params["mode"]}
                await self.event("session.mode_changed", change)
            self.mode = params["mode"]
            return {"status": "unchanged", "modelChanged": False, "modeApplied": True}
        if method == "session.history.compact":
            return await self.compact()
        return {}

    async def compact(self) -> dict[str, Any] | str:
        await self.event("session.compaction_start", {"currentTokens": 900, "tokenLimit": 1000})
        if self.nothing_to_compact:
            failed = {"success": False, "error": "Nothing to compact.", "tokenLimit": 1000}
            await self.event("session.compaction_complete", failed)
            return "Request session.history.compact failed with message: Nothing to compact."
        done = {
            "success": True,
            "preCompactionTokens": 900,
            "postCompactionTokens": 200,
            "tokensRemoved": 700,
            "messagesRemoved": 4,
            "tokenLimit": 1000,
        }
        await self.event("session.compaction_complete", done)
        return {"success": True, "tokensRemoved": 700, "messagesRemoved": 4}


MODELS = ("fake-model", "fake-other")
PLAN_READS: dict[str, dict[str, Any]] = {
    "session.plan.read": {
        "exists": True,
        "content": "# Plan\n\n- [x] read the code\n- [ ] write the fix\nsome prose\n",
        "path": "/fake/plan.md",
    },
    "session.plan.readSqlTodos": {
        "rows": [
            {"id": "t1", "title": "read the code", "status": "done"},
            {"id": "t2", "title": "write the fix", "status": "in_progress"},
            {"id": "t3", "description": "ship it", "status": "pending"},
        ]
    },
}


def _request_data(event_type: str) -> dict[str, Any]:
    """The seed's required fields of each waiting request event."""
    data: dict[str, Any] = {"requestId": "req-1"}
    extra: dict[str, dict[str, Any]] = {
        "elicitation.requested": {"message": "Pick a colour"},
        "exit_plan_mode.requested": {
            "summary": "a plan",
            "planContent": "1. do it",
            "actions": ["exit_only", "interactive"],
            "recommendedAction": "interactive",
        },
        "sampling.requested": {"serverName": "srv", "mcpRequestId": 7},
        "external_tool.requested": {
            "sessionId": "fake-session",
            "toolCallId": "call-1",
            "toolName": "lookup",
            "arguments": {"q": "x"},
        },
        "auto_mode_switch.requested": {"errorCode": "rate_limited"},
        "session_limits_exhausted.requested": {"usedAiCredits": 10, "maxAiCredits": 10},
        "mcp.oauth_required": {
            "serverName": "srv",
            "serverUrl": "http://127.0.0.1:9/mcp",
            "reason": "initial",
        },
        "mcp.headers_refresh_required": {
            "serverName": "srv",
            "serverUrl": "http://127.0.0.1:9/mcp",
            "reason": "startup",
        },
    }
    return {**data, **extra.get(event_type, {})}


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    await FakeCopilot(reader, writer).serve()


if __name__ == "__main__":
    asyncio.run(main())
