"""JSON-RPC 2.0 over an agent's stdio, one message per line.

`JsonRpcPeer.pump` reads the agent's stdout for the whole session: a
response settles the matching request of ours; requests and notifications
from the agent go, in order and a read's worth at a time (one batch per
chunk read), into the `incoming` channel (bounded: while it
is full the pump stops reading, and the agent's pipe stops the agent). A
line that is not JSON-RPC is not dropped: it goes in as `WireNoise` for
the driver to report. Responses are matched only against our own requests
(a message without `method`), so the agent's request ids may equal ours.

A line longer than `max_line` (16 MiB by default, as for every live agent)
is refused as it streams in and reported as `WireNoise`: it is never held
whole, let alone decoded (a 20 MB line held, copied and parsed would be
60 MB).

At EOF every request still waiting fails with `AgentGone` and `incoming`
is closed. Raw lines (both directions) go to the session's telemetry, for
wire recording. A line that is not JSON-RPC comes out as a typed
`WireProblem` (`_kit/problems.py`); it is counted where the driver reports
it, like every other problem.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs
import orjson

from ..pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ..pipeline.errors import AgentGone
from ..pipeline.framing import DEFAULT_MAX_LINE
from ..pipeline.plain import slot_maker
from ..pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from ._kit.problems import ProblemKind, WireProblem
from ._process import AgentProcess

__all__ = [
    "PARSE_ERROR",
    "Decoder",
    "JsonRpcPeer",
    "RpcError",
    "RpcNotification",
    "RpcRequest",
    "WireNoise",
    "WireProblem",
    "line_frame",
    "unreadable_request_id",
]

JSONRPC = "2.0"
PARSE_ERROR = -32700


@attrs.frozen
class RpcRequest:
    id: int | str
    method: str
    params: Any
    size: int = attrs.field(default=0, eq=False)  # bytes read from the agent for it, roughly


@attrs.frozen
class RpcNotification:
    method: str
    params: Any
    size: int = attrs.field(default=0, eq=False)  # bytes read from the agent for it, roughly


# `RpcNotification(method, params, size)`, through the slots while it is plain
# (`pipeline/plain.py`): most of what an agent sends is notifications.
new_notification: Callable[[str, Any, int], RpcNotification] = slot_maker(
    RpcNotification, ("method", "params", "size"), otherwise=RpcNotification
)

WireNoise = WireProblem  # the name the peer's callers knew it by


_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def unreadable_request_id(prefix: str) -> int | str | None:
    """The id of a request JSON could not read, if its prefix shows one."""
    if '"method"' not in prefix:
        return None
    found = _ID.search(prefix)
    if found is None:
        return None
    value = found.group(1)
    if value.startswith('"'):
        try:
            text = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
        return text if isinstance(text, str) else None
    return int(value)


Incoming = RpcRequest | RpcNotification | WireProblem
Decoded = list[dict[str, Any] | NotJson | Oversized]


class Decoder(Protocol):
    """A wire's framing, sans-IO: bytes in, JSON objects (or problems) out."""

    def feed(self, chunk: bytes) -> Decoded: ...

    def end(self) -> Decoded: ...


def line_frame(body: bytes) -> bytes:
    """One message per line, the default framing."""
    return body + b"\n"


class IncomingSink(Protocol):
    """Where the pump puts what the agent sent (a channel that may hold more)."""

    async def send_batch(self, batch: Sequence[Incoming], /) -> None: ...

    def close(self) -> None: ...


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


class JsonRpcPeer:
    def __init__(
        self,
        process: AgentProcess,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        telemetry: SessionTelemetry = NULL_TELEMETRY,
        decoder: Decoder | None = None,
        frame: Callable[[bytes], bytes] = line_frame,
    ) -> None:
        """`decoder` and `frame`: a framing other than one message per line."""
        self._process = process
        records = telemetry.records_wire  # the raw lines kept for it, not re-encoded
        self._decoder: Decoder = decoder or JsonLinesDecoder(max_line=max_line, keep_lines=records)
        self._frame = frame
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._telemetry = telemetry
        self._gone = False

    async def pump(self, incoming: IncomingSink) -> None:
        """Every message to `incoming`, a read's worth at a time, each with
        roughly the bytes read for it.

        The bytes read since the last message are shared among the messages a
        chunk completes: a line that spans many chunks carries them all, so a
        byte-bounded `incoming` holds a 16 MB message as 16 MB, not as one item.
        """
        unclaimed = 0  # bytes read that no message carries yet
        try:
            while chunk := await self._process.read():
                unclaimed += len(chunk)
                decoded = self._decoder.feed(chunk)
                if decoded:
                    share, unclaimed = unclaimed // len(decoded), 0
                    await self._hand_on(decoded, share, incoming)
            decoded = self._decoder.end()
            if decoded:
                await self._hand_on(decoded, unclaimed // len(decoded), incoming)
        finally:
            self._gone = True
            for waiter in self._waiting.values():
                if not waiter.done():
                    waiter.set_exception(AgentGone("the agent closed its output"))
            self._waiting.clear()
            incoming.close()

    async def _hand_on(self, decoded: Decoded, size: int, incoming: IncomingSink) -> None:
        """One read's messages to `incoming` as one batch; then the responses among
        them settle our requests, so what a request's caller does next (ACP's
        `stopReason`) follows every message the agent sent before its answer."""
        batch: list[Incoming] = []
        answered: list[tuple[asyncio.Future[Any], dict[str, Any]]] = []
        if self._telemetry.records_wire:
            self._record_in(decoded)
        for item in decoded:
            if not isinstance(item, dict):  # the decoder's NotJson or Oversized
                unread = unreadable_request_id(item.prefix) if isinstance(item, NotJson) else None
                batch.append(WireProblem.from_decoder(item, unread))
                continue
            method = item.get("method")
            if isinstance(method, str):
                if (request_id := item.get("id")) is not None:
                    batch.append(RpcRequest(request_id, method, item.get("params"), size))
                else:
                    batch.append(new_notification(method, item.get("params"), size))
                continue
            message_id = item.get("id")
            waiter = self._waiting.pop(message_id, None) if isinstance(message_id, int) else None
            if waiter is None:
                raw = orjson.dumps(item)[:200].decode(errors="replace")
                reason = "a response to no request of ours"
                batch.append(WireProblem(kind=ProblemKind.BAD_SHAPE, reason=reason, raw=raw))
            else:
                answered.append((waiter, item))
        try:
            if batch:
                await incoming.send_batch(batch)
        finally:
            for waiter, response in answered:
                _settle(waiter, response)

    def _record_in(self, decoded: Decoded) -> None:
        """The agent's messages to the wire recording: as read, where the decoder kept
        the lines (one message per line), else re-encoded."""
        decoder = self._decoder
        kept = decoder.raw_lines if isinstance(decoder, JsonLinesDecoder) else None
        if kept is not None and all(map(dict.__instancecheck__, decoded)):
            lines = kept  # no problem among them (the usual read): every line, as read
        else:
            lines = [
                orjson.dumps(item) if kept is None else kept[index]
                for index, item in enumerate(decoded)
                if isinstance(item, dict)
            ]
        if lines:
            self._telemetry.wire_lines("in", lines)

    async def _send(self, message: dict[str, Any]) -> None:
        line = orjson.dumps(message)
        if self._telemetry.records_wire:
            self._telemetry.wire_line("out", line)
        await self._process.write(self._frame(line))

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result; raise RpcError or AgentGone.

        Callers bound the wait with `asyncio.timeout`.
        """
        if self._gone:
            raise AgentGone("the agent closed its output")
        message_id = next(self._ids)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[message_id] = waiter
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": message_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            return await waiter
        finally:
            self._waiting.pop(message_id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    async def respond(self, message_id: int | str, result: Any) -> None:
        await self._send({"jsonrpc": JSONRPC, "id": message_id, "result": result})

    async def respond_error(
        self, message_id: int | str, code: int, message: str, data: Any = None
    ) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self._send({"jsonrpc": JSONRPC, "id": message_id, "error": error})


def _settle(waiter: asyncio.Future[Any], response: dict[str, Any]) -> None:
    """A response settles the request of ours it answers (unless its caller gave up)."""
    if waiter.done():
        return  # the caller gave up (timeout or cancel)
    error = response.get("error")
    if isinstance(error, dict):
        code, message = int(error.get("code", -32603)), str(error.get("message", ""))
        waiter.set_exception(RpcError(code, message, error.get("data")))
    else:
        waiter.set_result(response.get("result"))
