"""corral's own `--record-wire` files of ACP agents, re-normalized (for `corral import`).

The file and what every wire's reading shares: `sources/_recorded_wire.py`.
Here: each recorded message goes through the same replay as the
recorded-wire tests (`AcpReplay`, the live `Translator`), so an import of a
wire gets what the live session got, as this corral version normalizes it.

Which wire: its `initialize` says it is ACP (our request: an integer
`protocolVersion` and `clientCapabilities`; the agent's answer: an integer
`protocolVersion` and `agentCapabilities`).

Prompts: each outgoing `session/prompt` becomes a `PromptSent` with its
text and the line's time (the `TurnBegan` the replay makes for it is the
one the shared reading drops). Our answer to a `session/request_permission`
is the app's: the option chosen, by its kind (a `cancelled` outcome is a
withdrawal).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...pipeline.driver import PromptSent, ReplayItem, RequestAsked
from ...pipeline.events import PermissionChoice
from .._recorded_wire import answered, block_text, read_recorded_wire, recorded
from ._ask_records import offered_choices
from ._replay import AcpReplay

__all__ = ["read_acp_wire", "recognizes_acp_wire_line"]


def recognizes_acp_wire_line(value: Mapping[str, Any], path: Path) -> bool:
    """One recorded line of an ACP `initialize`: our request, or the agent's answer."""
    sent, received = recorded(value, "out"), recorded(value, "in")
    if sent is not None and sent.get("method") == "initialize":
        params = sent.get("params")
        return (
            isinstance(params, dict)
            and type(params.get("protocolVersion")) is int
            and isinstance(params.get("clientCapabilities"), dict)
        )
    if received is not None and isinstance(result := received.get("result"), dict):
        return type(result.get("protocolVersion")) is int and "agentCapabilities" in result
    return False


def _prompt(message: Mapping[str, Any], at_ns: int | None) -> PromptSent | None:
    if message.get("method") != "session/prompt":
        return None
    params = message.get("params")
    blocks = params.get("prompt") if isinstance(params, dict) else None
    return PromptSent(text=block_text(blocks), at_ns=at_ns)


class _AcpWire:
    """A recorded ACP wire's messages through `AcpReplay` (a `RecordedWire`)."""

    wire = "a tagged ACP line"
    raw_key = "acp/raw_line"

    def __init__(self) -> None:
        self._replay = AcpReplay()
        # the agent's permission request's id -> corral's request and its offered options
        self._asked: dict[Any, tuple[str, dict[str, PermissionChoice]]] = {}

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]:
        answer = self._answer(message)
        prompt = _prompt(message, at_ns)
        events = self._replay.sent(message)
        return [*answer, *events] if prompt is None else [prompt, *events]

    def _answer(self, message: Mapping[str, Any]) -> list[ReplayItem]:
        """Our answer to a permission request: the option chosen is the app's choice."""
        asked = self._asked.pop(message.get("id"), None) if "method" not in message else None
        if asked is None:
            return []
        result = message.get("result")
        outcome = result.get("outcome") if isinstance(result, dict) else None
        chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
        return answered(asked[0], asked[1].get(str(chosen)))  # cancelled: withdrawn

    def received(self, message: dict[str, Any]) -> list[ReplayItem]:
        events = self._replay.received(message)
        if message.get("method") == "session/request_permission":
            params = message.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            offered = {option: choice for choice, option in offered_choices(options).items()}
            for event in events:
                if isinstance(event, RequestAsked):
                    self._asked[message.get("id")] = (event.request.id, offered)
        return list(events)

    def end(self) -> list[ReplayItem]:
        return list(self._replay.end())


def read_acp_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    return read_recorded_wire(path, _AcpWire())
