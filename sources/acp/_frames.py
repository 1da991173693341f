"""Small shared pieces of the ACP wire: constants and diagnostics of raw frames.

Every frame corral cannot turn into an event becomes a `Diagnostic` that
carries the raw frame under `extensions["acp/raw_frame"]`, with
`extensions["corral/unknown_frame"]` naming what it was (an unknown
`sessionUpdate`, an extension method, an unsupported request...): nothing
the agent says is silently dropped. The driver counts these through its
telemetry by looking for that marker.
"""

from __future__ import annotations

from ...pipeline.driver import Emitted
from ...pipeline.events import Diagnostic, DiagnosticLevel

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "PROTOCOL_VERSION",
    "RAW_FRAME",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "UNKNOWN_FRAME",
    "raw_diagnostic",
]

PROTOCOL_VERSION = 1

# JSON-RPC and ACP error codes.
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
REQUEST_CANCELLED = -32800

RAW_FRAME = "acp/raw_frame"
UNKNOWN_FRAME = "corral/unknown_frame"


def raw_diagnostic(level: DiagnosticLevel, message: str, frame_type: str, raw: object) -> Emitted:
    """A Diagnostic carrying one raw frame the event model has no place for."""
    return Emitted(
        kind=Diagnostic(level=level, message=message),
        extensions={RAW_FRAME: raw, UNKNOWN_FRAME: frame_type},
    )
