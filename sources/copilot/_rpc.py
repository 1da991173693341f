"""JSON-RPC 2.0 over `copilot --headless --stdio`: Content-Length framing.

The shared `JsonRpcPeer` does everything this wire needs (responses matched
by direction, requests and notifications in order into a bounded channel,
a `WireProblem` for what is not JSON-RPC, `AgentGone` at EOF) except the
framing: it reads and writes one message per line by default, and
Copilot's SDK server frames each message with a `Content-Length` header.
`framed_peer` gives the peer this wire's decoder and framer.
"""

from __future__ import annotations

from ...pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from .._jsonrpc import JsonRpcPeer
from .._process import AgentProcess
from ._framing import DEFAULT_MAX_MESSAGE, ContentLengthDecoder, frame

__all__ = ["framed_peer"]


def framed_peer(
    process: AgentProcess,
    telemetry: SessionTelemetry = NULL_TELEMETRY,
    *,
    max_message: int = DEFAULT_MAX_MESSAGE,
) -> JsonRpcPeer:
    decoder = ContentLengthDecoder(max_message=max_message)
    return JsonRpcPeer(process, telemetry=telemetry, decoder=decoder, frame=frame)
