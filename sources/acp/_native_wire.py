"""corral's own `--record-wire` files of ACP agents, re-normalized (for `corral import`).

What flows in: a `<transcript id>.wire.jsonl` that `corral serve
--record-wire` wrote beside a session's transcript (`sinks/transcript/
_wire.py`), one line per message: `{"out": <sent>, "at": SystemTime}`,
`{"in": <received>, "at": ...}`, `{"in_text": "<not JSON>"}` or
`{"dropped": n}`. What flows out: the session again, through the same
replay as the recorded-wire tests (`AcpReplay`, the live `Translator`), so
an import of a wire gets what the live session got, as this corral
version normalizes it.

Which wire: the file has no header; its `initialize` says it is ACP (our
request: an integer `protocolVersion` and `clientCapabilities`; the
agent's answer: an integer `protocolVersion` and `agentCapabilities`).
Other wires' recordings are not recognized here.

Prompts: each outgoing `session/prompt` becomes a `PromptSent` with its
text and the line's time; the `TurnBegan` the replay makes for it is
dropped, as the import's replay acknowledges every prompt's turn itself.
`dropped` lines become a Warning `Diagnostic` (lines the recorder lost);
`in_text` lines (the agent's non-JSON output) carry nothing to replay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...pipeline.driver import Emitted, PromptSent, ReplayItem, TurnBegan
from ...pipeline.events import Diagnostic, DiagnosticLevel
from ._replay import AcpReplay

__all__ = ["read_acp_wire", "recognizes_acp_wire_line"]

_CHUNK = 256 * 1024


def recognizes_acp_wire_line(value: Mapping[str, Any], path: Path) -> bool:
    """One recorded line of an ACP `initialize`: our request, or the agent's answer."""
    sent, received = value.get("out"), value.get("in")
    if isinstance(sent, dict) and sent.get("method") == "initialize":
        params = sent.get("params")
        return (
            isinstance(params, dict)
            and type(params.get("protocolVersion")) is int
            and isinstance(params.get("clientCapabilities"), dict)
        )
    if isinstance(received, dict) and isinstance(result := received.get("result"), dict):
        return type(result.get("protocolVersion")) is int and "agentCapabilities" in result
    return False


def _at_ns(value: Mapping[str, Any]) -> int | None:
    at = value.get("at")
    if not isinstance(at, dict):
        return None
    secs, nanos = at.get("secs_since_epoch"), at.get("nanos_since_epoch", 0)
    if type(secs) is not int or type(nanos) is not int:
        return None
    return secs * 1_000_000_000 + nanos


def _prompt(value: Mapping[str, Any]) -> PromptSent | None:
    sent = value.get("out")
    if not isinstance(sent, dict) or sent.get("method") != "session/prompt":
        return None
    params = sent.get("params")
    blocks = params.get("prompt") if isinstance(params, dict) else None
    texts = [
        block["text"]
        for block in blocks or ()
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return PromptSent(text="\n".join(texts), at_ns=_at_ns(value))


class WireImport:
    """Sans-IO: the lines of a recorded wire in, replay items out."""

    def __init__(self) -> None:
        self._replay = AcpReplay()

    def line(self, raw: bytes) -> list[ReplayItem]:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return list(self._replay.feed(raw + b"\n"))  # the replay reports it
        if isinstance(value, dict) and "dropped" in value:
            message = f"the recording lost {value['dropped']} wire lines here (its queue was full)"
            return [Emitted(kind=Diagnostic(level=DiagnosticLevel.WARNING, message=message))]
        if isinstance(value, dict) and "in_text" in value:
            return []
        prompt = _prompt(value) if isinstance(value, dict) else None
        events = self._replay.feed(raw + b"\n")
        if prompt is None:
            return list(events)
        return [prompt, *(event for event in events if not isinstance(event, TurnBegan))]

    def end(self) -> list[ReplayItem]:
        return list(self._replay.end())


def read_acp_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    decoder = WireImport()
    rest = b""
    with Path(path).open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            *lines, rest = (rest + chunk).split(b"\n")
            for raw in lines:
                if raw.strip():
                    yield from decoder.line(raw)
    if rest.strip():
        yield from decoder.line(rest)
    yield from decoder.end()
