"""JSON-RPC 2.0 over `copilot --headless --stdio`: Content-Length framing.

The shared `JsonRpcPeer` does everything this wire needs (responses matched
by direction, requests and notifications in order into a bounded channel,
`WireNoise` for what is not JSON-RPC, `AgentGone` at EOF) except the
framing: it reads and writes one message per line, and Copilot's SDK server
frames each message with a `Content-Length` header. `FramedPeer` swaps the
two framing points and nothing else.

It reaches into two private members of `JsonRpcPeer` (`_decoder`, `_send`);
the clean fix is a `framing` parameter on `JsonRpcPeer` (proposed to the
lead), after which this module shrinks to a constructor call.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from .._jsonrpc import JsonRpcPeer
from .._process import AgentProcess
from ._framing import DEFAULT_MAX_MESSAGE, ContentLengthDecoder, frame

__all__ = ["FramedPeer"]


class FramedPeer(JsonRpcPeer):
    def __init__(
        self,
        process: AgentProcess,
        *,
        max_message: int = DEFAULT_MAX_MESSAGE,
        telemetry: SessionTelemetry = NULL_TELEMETRY,
    ) -> None:
        super().__init__(process, telemetry=telemetry)
        self._decoder = ContentLengthDecoder(max_message=max_message)  # type: ignore[assignment]
        self._framed_process = process
        self._framed_telemetry = telemetry

    async def _send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        if self._framed_telemetry.records_wire:
            self._framed_telemetry.wire_line("out", body)
        await self._framed_process.write(frame(body))
