"""The agent's requests to corral: permissions, file reads and writes, the rest.

What flows in: one JSON-RPC request from the agent. What flows out: the
driver events it becomes, and the agent's reply on the wire.

- `session/request_permission` → `RequestAsked` (answered later, by
  `Asks`, when the engine's `Respond` or `Withdraw` arrives);
- `fs/read_text_file` → served at once, inside the session dir only;
- `fs/write_text_file` → the path is checked, the current text read for
  the diff, and an Edit `RequestAsked` goes to the policy; `write` runs
  only after an allowing answer, then replies and finishes the tool;
- anything else → JSON-RPC -32601 and a Diagnostic, so the agent never
  waits on a request corral will not serve.

File calls block, so they run in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.errors import AgentGone
from ...pipeline.events import ToolStatus, ToolUpdated
from .._jsonrpc import JsonRpcPeer, RpcRequest
from ._asks import Reply, ReplyError, WriteFile
from ._frames import INVALID_PARAMS, METHOD_NOT_FOUND
from ._fs import FsRefused, old_text, read_text, write_text
from ._translate import Translator

__all__ = ["AgentRequests", "Push"]

Push = Callable[[list[DriverEvent]], Awaitable[None]]


class AgentRequests:
    def __init__(self, peer: JsonRpcPeer, root: str, translator: Translator) -> None:
        self._peer = peer
        self._root = root
        self._translator = translator

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
