"""Small shared pieces of the ACP wire: constants, prompts, diagnostics of raw frames.

Every frame corral cannot turn into an event becomes a `Diagnostic` that
carries the raw frame under `extensions["acp/raw_frame"]`, with
`Emitted.unknown_frame` naming what it was (an unknown `sessionUpdate`, an
extension method, an unsupported request...): nothing the agent says is
silently dropped. The driver counts these through its telemetry by that
field (the engine writes it as `corral/unknown_frame`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ...pipeline.driver import Emitted
from ...pipeline.events import Diagnostic, DiagnosticLevel
from .._jsonrpc import Incoming, RpcNotification

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "PROTOCOL_VERSION",
    "RAW_FRAME",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "history_note",
    "is_history",
    "prompt_blocks",
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


def raw_diagnostic(level: DiagnosticLevel, message: str, frame_type: str, raw: object) -> Emitted:
    """A Diagnostic carrying one raw frame the event model has no place for."""
    return Emitted(
        kind=Diagnostic(level=level, message=message),
        unknown_frame=frame_type,
        extensions={RAW_FRAME: raw},
    )


_HISTORY_KINDS = frozenset(
    {
        "agent_message_chunk",
        "agent_thought_chunk",
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "plan_update",
        "plan_removed",
        "usage_update",
    }
)


def prompt_blocks(text: str, attachments: Sequence[str], cwd: str) -> list[dict[str, Any]]:
    """A prompt as ACP content: the text, then each attachment as a resource link."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for attachment in attachments:
        if "://" in attachment:
            uri = attachment
        else:
            uri = "file://" + os.path.abspath(os.path.join(cwd, attachment))
        name = os.path.basename(attachment.rstrip("/")) or attachment
        blocks.append({"type": "resource_link", "uri": uri, "name": name})
    return blocks


def is_history(item: Incoming) -> bool:
    if not isinstance(item, RpcNotification) or item.method != "session/update":
        return False
    params = item.params if isinstance(item.params, dict) else {}
    update = params.get("update")
    return isinstance(update, dict) and update.get("sessionUpdate") in _HISTORY_KINDS


def history_note(dropped: int) -> Emitted:
    """The one note standing for a resumed session's replayed history."""
    return Emitted(
        kind=Diagnostic(
            level=DiagnosticLevel.INFO,
            message=f"the agent replayed {dropped} updates of the resumed "
            "session's history; corral does not show them again",
        ),
        extensions={"acp/replayed_updates": dropped},
    )
