"""corral's own `--record-wire` files of Copilot's SDK server, re-normalized (for `corral import`).

The file and what every wire's reading shares: `sources/_recorded_wire.py`.
The recorder writes each JSON-RPC message whole (the Content-Length
framing is the peer's, not the message's), so a line is one message as
for the other wires. Each `session.event` goes through the live driver's
`CopilotNormalizer`, so an import of a wire gets what the live session
got, as this corral version normalizes it.

Which wire: our `connect` (or the `ping` older servers get) and Copilot's
answer to it (`ok`, an integer `protocolVersion` and its `version`).

What corral sent, replayed: `session.send` is a prompt, a `PromptSent`
(its text, the line's time), whose `user.message` echo the normalizer
then expects, as live (with `mode: "immediate"`, a steer: expected
only); a permission's answer (`handlePendingPermissionRequest`) is the
app's (approve once, for the session, reject; "user not available" is a
withdrawal). A plan or todo signal's read (`plan_call`) is answered in the
recording: the answer is the `PlanUpdated`, as live. A request Copilot
announces as an event and waits on is the live driver's Warning (its
decline is in the recording too). Other notifications and requests are
the live driver's Info `Diagnostic` with the raw frame.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...pipeline.driver import DriverEvent, PromptSent, ReplayItem
from ...pipeline.events import PermissionChoice
from .._kit.driver import unknown
from .._recorded_wire import answered, read_recorded_wire, recorded
from ._base import RAW_KEY
from ._controls import plan_call, plan_from
from ._declines import DECLINED_KEY, decline_for
from ._normalize import CopilotNormalizer

__all__ = ["read_copilot_wire", "recognizes_copilot_wire_line"]

_HELLO = frozenset({"connect", "ping"})
_PLAN_READS = frozenset({"session.plan.read", "session.plan.readSqlTodos"})
_PERMISSION_ANSWER = "session.permissions.handlePendingPermissionRequest"
# corral's answers to a permission (`permission_result`); user-not-available: withdrawn
_CHOICES = {
    "approve-once": PermissionChoice.ALLOW_ONCE,
    "approve-for-session": PermissionChoice.ALLOW_ALWAYS,
    "reject": PermissionChoice.DENY_ONCE,
}


def recognizes_copilot_wire_line(value: Mapping[str, Any], path: Path) -> bool:
    """One recorded line of Copilot's `connect`: our request, or the server's answer."""
    sent, received = recorded(value, "out"), recorded(value, "in")
    if sent is not None:
        return sent.get("method") in _HELLO and sent.get("id") is not None
    if received is not None and isinstance(result := received.get("result"), dict):
        return (
            result.get("ok") is True
            and type(result.get("protocolVersion")) is int
            and isinstance(result.get("version"), str)
        )
    return False


class _CopilotWire:
    """A recorded SDK-server wire through `CopilotNormalizer` (a `RecordedWire`)."""

    wire = "a tagged Copilot SDK server line"
    raw_key = RAW_KEY

    def __init__(self) -> None:
        self._normalizer = CopilotNormalizer()
        self._reads: dict[Any, str] = {}  # our plan read's request id -> its method

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]:
        method, params = message.get("method"), message.get("params")
        if method in _PLAN_READS:
            self._reads[message.get("id")] = str(method)
        if method == _PERMISSION_ANSWER and isinstance(params, dict):
            result = params.get("result")
            kind = result.get("kind") if isinstance(result, dict) else None
            return answered(params.get("requestId"), _CHOICES.get(str(kind)))
        if method != "session.send" or not isinstance(params, dict):
            return []
        text = str(params.get("prompt", ""))
        steer = params.get("mode") == "immediate"
        self._normalizer.expect_prompt(text, steer=steer)
        return [] if steer else [PromptSent(text=text, at_ns=at_ns)]

    def received(self, message: dict[str, Any]) -> list[ReplayItem]:
        method, params = message.get("method"), message.get("params")
        if method == "session.event" and isinstance(params, dict):
            return list(self._event(params.get("event")))
        if method == "userInput.request":
            return []  # answered with the `user_input.requested` event's answer
        if isinstance(method, str):
            marks: dict[str, Any] = {RAW_KEY: {"method": method, "params": params}}
            if message.get("id") is not None:
                marks[DECLINED_KEY] = method
            return [unknown(method, f"Copilot sent {method}", **marks)]
        read = self._reads.pop(message.get("id"), None)
        plan = None if read is None else plan_from(read, message.get("result"))
        return [] if plan is None else [plan]

    def _event(self, event: object) -> list[DriverEvent]:
        decline = decline_for(event)
        if decline is not None:
            return [decline.note]
        if plan_call(event) is not None:
            return []  # the plan is the answer to corral's read
        return self._normalizer.feed(event)

    def end(self) -> list[ReplayItem]:
        return []


def read_copilot_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    return read_recorded_wire(path, _CopilotWire())
