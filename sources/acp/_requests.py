"""The agent's requests to corral: permissions, files, terminals, the rest.

What flows in: one JSON-RPC request from the agent. What flows out: the
driver events it becomes, and the agent's reply on the wire.

- `session/request_permission` → `RequestAsked` (answered later, by
  `Asks`, when the engine's `Respond` or `Withdraw` arrives);
- `fs/read_text_file` → served at once, inside the session dir only;
- `fs/write_text_file` → the path is checked, the current text read for
  the diff, and an Edit `RequestAsked` goes to the policy; `write` runs
  only after an allowing answer, then replies and finishes the tool;
- `terminal/create` (when terminals are on) → the command is checked
  (`_terminal.command_spec`: cwd inside the session dir, bounded output)
  and judged like a write: run at once on the grant of an allowed
  permission for that very command line, else an Execute `RequestAsked`
  for the policy; `start` runs it after an allowing answer; a refused
  command is a JSON-RPC error and a Warning Diagnostic;
- `terminal/output` is answered at once; `terminal/wait_for_exit`,
  `terminal/kill` and `terminal/release` may wait, so each runs as a task
  in the session's task group and replies when done;
- anything else → JSON-RPC -32601 and a Diagnostic, so the agent never
  waits on a request corral will not serve.

File calls block, so they run in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.errors import AgentGone
from ...pipeline.events import Diagnostic, DiagnosticLevel, ToolStatus, ToolUpdated
from .._jsonrpc import JsonRpcPeer, RpcRequest
from ._asks import Reply, ReplyError, RunCommand, WriteFile
from ._frames import INVALID_PARAMS, METHOD_NOT_FOUND, RAW_FRAME
from ._fs import FsRefused, old_text, read_text, write_text
from ._terminal import command_spec
from ._terminals import Terminals
from ._translate import Translator

__all__ = ["AgentRequests", "Push", "Spawn", "refusal_events"]

Push = Callable[[list[DriverEvent]], Awaitable[None]]
Spawn = Callable[[Coroutine[Any, Any, None], str], None]
_WAITING_CALLS = frozenset({"terminal/wait_for_exit", "terminal/kill", "terminal/release"})


class AgentRequests:
    def __init__(
        self,
        peer: JsonRpcPeer,
        root: str,
        translator: Translator,
        *,
        terminals: Terminals | None = None,
        spawn: Spawn | None = None,
    ) -> None:
        self._peer = peer
        self._root = root
        self._translator = translator
        self._terminals = terminals  # None: corral does not offer `terminal`
        self._spawn = spawn
        if terminals is not None:
            translator.tools.terminal_text = terminals.text

    async def reply(self, reply: Reply | ReplyError) -> None:
        try:
            if isinstance(reply, Reply):
                await self._peer.respond(reply.rpc_id, reply.result)
            else:
                await self._peer.respond_error(reply.rpc_id, reply.code, reply.message)
        except AgentGone:
            pass  # the driver's run reports the exit

    async def agent_request(self, request: RpcRequest) -> list[DriverEvent]:
        params = request.params if isinstance(request.params, dict) else {}
        match request.method:
            case "session/request_permission":
                return self._translator.asks.permission(request.id, params)
            case "fs/read_text_file":
                await self._read_file(request.id, params)
                return []
            case "fs/write_text_file":
                return await self._write_asked(request.id, params)
            case "terminal/create" if self._terminals is not None:
                return await self._command_asked(request.id, params)
            case "terminal/output" if self._terminals is not None:
                await self._output(request.id, params)
                return []
            case method if method in _WAITING_CALLS and self._terminals is not None:
                assert self._spawn is not None
                self._spawn(self._terminal_call(request.id, method, params), f"acp-{method}")
                return []
        await self.reply(
            ReplyError(request.id, METHOD_NOT_FOUND, f"corral does not serve {request.method}")
        )
        return self._translator.unsupported(request.method, request.params)

    async def _read_file(self, rpc_id: int | str, params: Mapping[str, Any]) -> None:
        line, limit = params.get("line"), params.get("limit")
        try:
            text = await asyncio.to_thread(
                read_text,
                self._root,
                params.get("path"),  # type: ignore[arg-type]  # confine() checks it
                line if isinstance(line, int) else None,
                limit if isinstance(limit, int) else None,
            )
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return
        await self.reply(Reply(rpc_id, {"content": text}))

    async def _write_asked(self, rpc_id: int | str, params: Mapping[str, Any]) -> list[DriverEvent]:
        path, content = params.get("path"), params.get("content")
        try:
            if not isinstance(path, str) or not isinstance(content, str):
                raise FsRefused(
                    INVALID_PARAMS, "fs/write_text_file needs a string path and content"
                )
            _, before = await asyncio.to_thread(old_text, self._root, path)
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return []
        return self._translator.asks.write(rpc_id, path=path, content=content, old_text=before)

    # ---- writing --------------------------------------------------------------------

    async def write(self, action: WriteFile, push: Push) -> None:
        tool = action.tool
        try:
            await asyncio.to_thread(write_text, self._root, action.path, action.content)
        except FsRefused as refused:
            await self.reply(ReplyError(action.rpc_id, refused.code, refused.message))
            failed = attrs.evolve(tool, status=ToolStatus.FAILED, output=refused.message)
            await push([Emitted(kind=ToolUpdated(failed))])
            return
        await self.reply(Reply(action.rpc_id, {}))
        done = attrs.evolve(tool, status=ToolStatus.COMPLETED)
        await push([Emitted(kind=ToolUpdated(done))])

    # ---- terminals -------------------------------------------------------------------

    async def _command_asked(
        self, rpc_id: int | str, params: Mapping[str, Any]
    ) -> list[DriverEvent]:
        try:
            spec = await asyncio.to_thread(command_spec, params, self._root)
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return [_refused_command(refused.message, params)]
        decision = self._translator.asks.command(rpc_id, spec)
        if isinstance(decision, RunCommand):
            _, events = await self.start(decision)
            return events
        return decision

    async def start(self, action: RunCommand) -> tuple[str | None, list[DriverEvent]]:
        """Run an allowed command: its terminal id, and the events to show."""
        assert self._terminals is not None
        tool = action.tool
        try:
            terminal_id = await self._terminals.create(action.spec, tool)
        except FsRefused as refused:
            await self.reply(ReplyError(action.rpc_id, refused.code, refused.message))
            events: list[DriverEvent] = [
                _refused_command(refused.message, {"command": action.spec.line})
            ]
            if tool is not None:
                failed = attrs.evolve(tool, status=ToolStatus.FAILED, output=refused.message)
                events.append(Emitted(kind=ToolUpdated(failed)))
            return None, events
        await self.reply(Reply(action.rpc_id, {"terminalId": terminal_id}))
        return terminal_id, [] if tool is None else [Emitted(kind=ToolUpdated(tool))]

    async def start_and_show(self, action: RunCommand, push: Push) -> None:
        """`start` after the app's answer: its events go in before the command's end."""
        assert self._terminals is not None
        terminal_id, events = await self.start(action)
        try:
            await push(events)
        finally:
            if terminal_id is not None:
                self._terminals.announce(terminal_id)

    async def _output(self, rpc_id: int | str, params: Mapping[str, Any]) -> None:
        assert self._terminals is not None
        try:
            result = self._terminals.output(params.get("terminalId"))
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return
        await self.reply(Reply(rpc_id, result))

    async def _terminal_call(
        self, rpc_id: int | str, method: str, params: Mapping[str, Any]
    ) -> None:
        assert self._terminals is not None
        terminal_id = params.get("terminalId")
        result: object = {}
        try:
            if method == "terminal/wait_for_exit":
                result = await self._terminals.wait_for_exit(terminal_id)
            elif method == "terminal/kill":
                await self._terminals.kill(terminal_id)
            else:
                await self._terminals.release(terminal_id)
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return
        await self.reply(Reply(rpc_id, result))

    def terminal_exited(self, terminal_id: str) -> list[DriverEvent]:
        """A command ended: corral's own tool for it finishes; tools showing it refresh."""
        assert self._terminals is not None
        own = self._terminals.finished_tool(terminal_id)
        tools = ([own] if own is not None else []) + self._translator.tools.terminal_exited(
            terminal_id
        )
        return [Emitted(kind=ToolUpdated(tool)) for tool in tools]


def _refused_command(reason: str, params: object) -> Emitted:
    return Emitted(
        kind=Diagnostic(
            level=DiagnosticLevel.WARNING,
            message=f"corral refused to run the agent's command: {reason}",
        ),
        extensions={"acp/terminal_refused": reason, RAW_FRAME: params},
    )


def refusal_events(action: ReplyError) -> list[DriverEvent]:
    """What the app sees of a refused request: its tool cancelled, a warning if any."""
    events: list[DriverEvent] = []
    if action.tool is not None:
        events.append(Emitted(kind=ToolUpdated(action.tool)))
    if action.warning is not None:
        warning = Diagnostic(level=DiagnosticLevel.WARNING, message=action.warning)
        events.append(Emitted(kind=warning, extensions={"acp/terminal_refused": action.warning}))
    return events
