"""Responses to corral's own control requests, turned into DriverEvents.

What flows in: the kind of request we sent (`initialize`, `interrupt`,
`cancel_message`, `model`, `mode`), the value we asked for, and the CLI's
`control_response` body (`subtype` success or error). What flows out:
DriverEvents, plus state changes on the protocol (handshake facts, a
follow-up `cancel_async_message`).

- `initialize`: the payload becomes the handshake; an error fails it.
- `interrupt` (sent with `cancel_queued: true`): a prompt listed under
  `cancelled` will never run, so its turn ends `Cancelled` now; one listed
  under `still_queued` (a CLI that ignores `cancel_queued`) is withdrawn
  with `cancel_async_message`.
- `cancel_message`: `cancelled: true` ends that prompt's turn `Cancelled`.
- `model` / `mode` / `effort` (`apply_flag_settings {effortLevel}`):
  `ConfigApplied` with the value asked for, or `ConfigRefused` with the
  CLI's reason.
- `rewind` (`rewind_files` for a rollback with files, `_rollback.py`):
  success with `canRewind` makes the fork ready (the driver then replaces
  the process); anything else refuses the rollback (`RollbackVerdict`).
- `usage` (`get_usage` after a turn on a claude.ai plan): `PlanUsageUpdated`
  when the answer holds a window; nothing otherwise (see `_usage.py`); an
  error answer (a CLI without `get_usage`) ends the asking for this process.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...pipeline.driver import ConfigApplied, ConfigRefused, DriverEvent, Emitted, RollbackVerdict
from ...pipeline.events import PlanUsageUpdated
from ._json import field_obj
from ._usage import usage_update

if TYPE_CHECKING:
    from ._core import ProtocolCore

__all__ = ["control_outcome"]


def _strings(payload: Mapping[str, Any], key: str) -> list[str]:
    values = payload.get(key)
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _interrupted(protocol: ProtocolCore, payload: Mapping[str, Any]) -> list[DriverEvent]:
    events: list[DriverEvent] = []
    for message_uuid in _strings(payload, "cancelled"):
        events.extend(protocol.finish_if_current(message_uuid))
    waiting = protocol.current_uuid(unbegun=True)
    if waiting is not None and waiting in _strings(payload, "still_queued"):
        protocol.cancel_message(waiting)
    return events


def _rewound(
    protocol: ProtocolCore, ok: bool, payload: Mapping[str, Any], error: str
) -> list[DriverEvent]:
    point, protocol.rolling = protocol.rolling, None
    if point is None:
        return []
    if ok:
        protocol.fork = point
        return []
    reason = payload.get("error") if isinstance(payload.get("error"), str) else error
    reason = f"Claude Code cannot rewind the files: {reason}"
    return [RollbackVerdict(accepted=False, reason=reason)]


def control_outcome(
    protocol: ProtocolCore, kind: str, value: str, response: Mapping[str, Any]
) -> list[DriverEvent]:
    ok = response.get("subtype") == "success"
    payload = field_obj(response, "response")
    error = str(response.get("error") or "no reason given")
    if kind == "initialize":
        if ok:
            protocol.initialized = payload
        else:
            protocol.init_failure = error
        return []
    if kind == "interrupt":
        return _interrupted(protocol, payload) if ok else []
    if kind == "usage":
        protocol.reads_usage = ok  # a CLI that refused it once is not asked again
        usage = usage_update(response, protocol.wall_clock_ns())
        return [] if usage is None else [Emitted(kind=PlanUsageUpdated(usage))]
    if kind == "rewind":
        return _rewound(protocol, ok and payload.get("canRewind") is True, payload, error)
    if kind == "cancel_message":
        return protocol.finish_if_current(value) if ok and payload.get("cancelled") else []
    if not ok:
        return [ConfigRefused(option=kind, reason=error)]
    if kind == "mode":
        protocol.mode = value
    elif kind == "effort":
        protocol.effort = value
    else:
        protocol.model = value
    return [ConfigApplied(option=kind, value=value)]
