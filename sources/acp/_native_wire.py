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
one the shared reading drops).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...pipeline.driver import PromptSent, ReplayItem
from .._recorded_wire import block_text, read_recorded_wire, recorded
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

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]:
        prompt = _prompt(message, at_ns)
        events = self._replay.sent(message)
        return list(events) if prompt is None else [prompt, *events]

    def received(self, message: dict[str, Any]) -> list[ReplayItem]:
        return list(self._replay.received(message))

    def end(self) -> list[ReplayItem]:
        return list(self._replay.end())


def read_acp_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    return read_recorded_wire(path, _AcpWire())
