"""The agent's requests to corral: permissions, files, terminals, the rest.

What flows in: one JSON-RPC request from the agent. What flows out: the
driver events it becomes, and the agent's reply on the wire.

- `session/request_permission` → `RequestAsked` (answered later, by
  `Asks`, when the engine's `Respond` or `Withdraw` arrives);
- `fs/read_text_file` → the path is opened beneath the session dir (a
  regular file, no link followed) and a Read `RequestAsked` goes to the
  policy; `read` serves the judged file only after an allowing answer,
  then replies and finishes the tool;
- `fs/write_text_file` → the same, with the current text for the diff and
  an Edit `RequestAsked`; `write` runs only after an allowing answer;
- `terminal/create` (when terminals are on) → the command is checked
  (`_terminal.command_spec`: cwd beneath the session dir, bounded output)
  and judged like a write: run at once on the grant of an allowed
  permission for that very command line, else an Execute `RequestAsked`
  for the policy; `start` runs it after an allowing answer; a refused
  command is a JSON-RPC error and a Warning Diagnostic;
- a terminal's output, as it arrives, → `ToolOutputDelta` for corral's own
  tool for the command and each unfinished call that shows the terminal
  (`terminal_output`);
- `terminal/output` is answered at once; `terminal/wait_for_exit`,
  `terminal/kill` and `terminal/release` may wait, so each runs as a task
  in the session's task group and replies when done;
- `elicitation/create` → a Question `RequestAsked` for a form corral can
  show (`_elicit`), answered later in the agent's shape; anything else
  (a URL, a field corral cannot show) is declined at once (`{"action":
  "decline"}`, the elicitation answer of ACP and MCP) with a Warning
  Diagnostic saying why;
- anything else → JSON-RPC -32601 and a Diagnostic, so the agent never
  waits on a request corral will not serve.

Bounds: the agent cannot pile up work in a session. At most
`MAX_OPEN_ASKS` requests wait on the policy or the app, at most
`MAX_EXIT_WAITS` `terminal/wait_for_exit` calls wait, at most
`MAX_TERMINALS` terminals run, and at most `MAX_OUTSTANDING` requests of
the agent are being served at all (kill and release, which free what
waits, are counted apart so they are never refused behind the rest); past
a bound the request gets a JSON-RPC error saying which bound, and the app
one Warning Diagnostic per crossing.

Failure: no exception from serving one request ends the session. An
unexpected one becomes a JSON-RPC internal error to the agent and a
Warning Diagnostic (`acp/request_failed`), and the session goes on; the
agent's bad input (a path with a NUL byte, not UTF-8, a link that changes
under us) is a plain JSON-RPC error. File calls block, so they run in a
worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.errors import AgentGone
from ...pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from .._jsonrpc import JsonRpcPeer, RpcRequest
from ._asks import MAX_OPEN_ASKS, ReadFile, Reply, ReplyError, RunCommand, WriteFile
from ._frames import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from ._fs import FsRefused, judge_read, judge_write, read_text, write_text
from ._refusals import refusal_events, refused_command
from ._request_bounds import (
    FREEING,
    MAX_EXIT_WAITS,
    MAX_OUTSTANDING,
    WAITING_CALLS,
    bounds_for,
    first_crossed,
)
from ._terminal import command_spec
from ._terminals import MAX_TERMINALS, Terminals
from ._translate import Translator

__all__ = [
    "MAX_EXIT_WAITS",
    "MAX_OPEN_ASKS",
    "MAX_OUTSTANDING",
    "MAX_TERMINALS",
    "AgentRequests",
    "Push",
    "Spawn",
    "refusal_events",
]

Push = Callable[[list[DriverEvent]], Awaitable[None]]
Spawn = Callable[[Coroutine[Any, Any, None], str], None]

_FAILED = "acp/request_failed"
_LIMITED = "acp/limit"


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
        self._exit_waits = 0
        self._freeing = 0  # kill and release calls being served
        self._serving = 0  # our tasks serving one request each (calls, reads, writes, starts)
        self._limits_hit: set[str] = set()  # bounds crossed and not yet left
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
        """Serve one request; whatever goes wrong, the agent gets an answer."""
        params = request.params if isinstance(request.params, dict) else {}
        limited = self._over_limit(request.method)
        if limited is not None:
            return await self._refuse_over(request, *limited)
        try:
            return await self._dispatch(request, params)
        except Exception as error:  # a bug of ours must not end the session; see the header
            return await self._failed(request, error)

    async def _dispatch(self, request: RpcRequest, params: Mapping[str, Any]) -> list[DriverEvent]:
        match request.method:
            case "session/request_permission":
                return self._translator.asks.permission(request.id, params)
            case "elicitation/create":
                asked = self._translator.asks.elicitation(request.id, params)
                if isinstance(asked, list):
                    return asked
                await self.reply(asked)  # a form corral cannot show: the wire's own decline
                return self._translator.declined(request.method, request.params, asked.warning)
            case "fs/read_text_file":
                return await self._read_asked(request.id, params)
            case "fs/write_text_file":
                return await self._write_asked(request.id, params)
            case "terminal/create" if self._terminals is not None:
                return await self._command_asked(request.id, params)
            case "terminal/output" if self._terminals is not None:
                await self._output(request.id, params)
                return []
            case method if method in WAITING_CALLS and self._terminals is not None:
                self._exit_waits += method == "terminal/wait_for_exit"
                self._freeing += method in FREEING
                self._start(self._terminal_call(request.id, method, params), f"acp-{method}")
                return []
        await self.reply(
            ReplyError(request.id, METHOD_NOT_FOUND, f"corral does not serve {request.method}")
        )
        return self._translator.unsupported(request.method, request.params)

    # ---- bounds and failures ------------------------------------------------------------

    def _over_limit(self, method: str) -> tuple[str, str] | None:
        """(which bound, what the agent reads) when serving `method` would cross one."""
        asks = self._translator.asks
        bounds = bounds_for(
            method,
            asks_full=asks.full(),
            open_asks=len(asks.open_ids()),
            exit_waits=self._exit_waits,
            serving=self._serving,
            freeing=self._freeing,
        )
        return first_crossed(bounds, self._limits_hit)

    async def _refuse_over(self, request: RpcRequest, bound: str, why: str) -> list[DriverEvent]:
        message = f"corral refused {request.method}: {why} in this session (its limit)"
        await self.reply(ReplyError(request.id, INTERNAL_ERROR, message))
        if bound in self._limits_hit:
            return []  # the app heard of this crossing already
        self._limits_hit.add(bound)
        warning = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
        return [Emitted(kind=warning, extensions={_LIMITED: bound})]

    async def _failed(self, request: RpcRequest, error: Exception) -> list[DriverEvent]:
        message = f"corral failed to serve {request.method}: {type(error).__name__}: {error}"
        await self.reply(ReplyError(request.id, INTERNAL_ERROR, message))
        warning = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
        return [Emitted(kind=warning, extensions={_FAILED: request.method})]

    def _start(self, work: Coroutine[Any, Any, None], name: str) -> None:
        assert self._spawn is not None
        self._serving += 1
        self._spawn(self._served(work), name)

    async def _served(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        finally:
            self._serving -= 1

    async def guarded(
        self, rpc_id: int | str, what: str, work: Awaitable[None], push: Push
    ) -> None:
        """Run the work of an answered request; a failure is the agent's error, not ours."""
        self._serving += 1
        try:
            await work
        except Exception as error:  # see the header: the session goes on
            events = await self._failed(RpcRequest(rpc_id, what, None), error)
            await push(events)
        finally:
            self._serving -= 1

    # ---- files ---------------------------------------------------------------------------

    async def _read_asked(self, rpc_id: int | str, params: Mapping[str, Any]) -> list[DriverEvent]:
        line, limit = params.get("line"), params.get("limit")
        try:
            judged = await asyncio.to_thread(judge_read, self._root, params.get("path"))
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return []
        return self._translator.asks.read(
            rpc_id,
            judged,
            line=line if isinstance(line, int) and not isinstance(line, bool) else None,
            limit=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        )

    async def read(self, action: ReadFile, push: Push) -> None:
        """An allowed read: the judged file's text to the agent, the Read tool finished."""
        try:
            text = await asyncio.to_thread(
                read_text, self._root, action.judged, action.line, action.limit
            )
        except FsRefused as refused:
            await self._file_failed(action.rpc_id, action.tool, refused, push)
            return
        await self.reply(Reply(action.rpc_id, {"content": text}))
        done = attrs.evolve(action.tool, status=ToolStatus.COMPLETED)
        await push([Emitted(kind=ToolUpdated(done))])

    async def _write_asked(self, rpc_id: int | str, params: Mapping[str, Any]) -> list[DriverEvent]:
        path, content = params.get("path"), params.get("content")
        try:
            if not isinstance(path, str) or not isinstance(content, str):
                raise FsRefused(
                    INVALID_PARAMS, "fs/write_text_file needs a string path and content"
                )
            judged = await asyncio.to_thread(judge_write, self._root, path)
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return []
        return self._translator.asks.write(
            rpc_id, path=judged.path, content=content, old_text=judged.text, judged=judged
        )

    async def write(self, action: WriteFile, push: Push) -> None:
        """An allowed write, to the very file that was judged."""
        try:
            await asyncio.to_thread(write_text, self._root, action.judged, action.content)
        except FsRefused as refused:
            await self._file_failed(action.rpc_id, action.tool, refused, push)
            return
        await self.reply(Reply(action.rpc_id, {}))
        done = attrs.evolve(action.tool, status=ToolStatus.COMPLETED)
        await push([Emitted(kind=ToolUpdated(done))])

    async def _file_failed(
        self, rpc_id: int | str, tool: ToolUpdate, refused: FsRefused, push: Push
    ) -> None:
        await self.reply(ReplyError(rpc_id, refused.code, refused.message))
        failed = attrs.evolve(tool, status=ToolStatus.FAILED, output=refused.message)
        await push([Emitted(kind=ToolUpdated(failed))])

    # ---- terminals -------------------------------------------------------------------

    async def _command_asked(
        self, rpc_id: int | str, params: Mapping[str, Any]
    ) -> list[DriverEvent]:
        try:
            spec = await asyncio.to_thread(command_spec, params, self._root)
        except FsRefused as refused:
            await self.reply(ReplyError(rpc_id, refused.code, refused.message))
            return [refused_command(refused.message, params)]
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
                refused_command(refused.message, {"command": action.spec.line})
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
        except Exception as error:  # see the header: the session goes on
            await self.reply(ReplyError(rpc_id, INTERNAL_ERROR, f"corral failed: {error}"))
            return
        finally:
            self._exit_waits -= method == "terminal/wait_for_exit"
            self._freeing -= method in FREEING
        await self.reply(Reply(rpc_id, result))

    def terminal_output(self, terminal_id: str, text: str) -> list[DriverEvent]:
        """Output a terminal just wrote: a delta for each tool that shows it."""
        assert self._terminals is not None
        own = self._terminals.own_tool_id(terminal_id)
        shown = self._translator.tools.showing(terminal_id)
        tool_ids = ([own] if own is not None else []) + shown
        return [Emitted(kind=ToolOutputDelta(tool_id=tool_id, text=text)) for tool_id in tool_ids]

    def terminal_exited(self, terminal_id: str) -> list[DriverEvent]:
        """A command ended: corral's own tool for it finishes; tools showing it refresh."""
        assert self._terminals is not None
        own = self._terminals.finished_tool(terminal_id)
        tools = ([own] if own is not None else []) + self._translator.tools.terminal_exited(
            terminal_id
        )
        return [Emitted(kind=ToolUpdated(tool)) for tool in tools]
