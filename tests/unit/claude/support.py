"""Replaying recorded Claude Code wires through the sans-IO protocol.

`load(name)` reads `tests/fixtures/claude/<name>.jsonl` (see `record.py`
there). `replay(name, feed=...)` runs a fresh `ClaudeProtocol` with the
recording's deterministic ids: every recorded command goes through
`send` (and must write exactly the recorded bytes), and each run of CLI
lines between two commands is fed in one of three ways: `"whole"` (one
chunk), `"bytes"` (one byte at a time), `"lines"` (one line per chunk).
It returns everything the protocol produced, in order.

`as_event(kind)` wraps an event kind in an envelope so the schema can
check it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from corral.pipeline.driver import (
    Compact,
    Configure,
    DriverCommand,
    DriverEvent,
    Emitted,
    Interrupt,
    RequestAsked,
    Respond,
    StartTurn,
    Withdraw,
)
from corral.pipeline.events import (
    Event,
    EventKind,
    RequestOpened,
    answer_from_wire,
)
from corral.pipeline.extensions import wire_extensions
from corral.sources.claude import ClaudeProtocol

from tests.support.schema import check

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "claude"
NAMESPACE = uuid.UUID("6f1c2a1e-8a57-4c1b-9b0e-0c0ffee0c0de")


def fixture_ids(scenario: str) -> Callable[[], str]:
    """The deterministic uuids a recording's protocol minted (replays mint the same)."""
    count = 0

    def next_id() -> str:
        nonlocal count
        count += 1
        return str(uuid.uuid5(NAMESPACE, f"{scenario}-{count}"))

    return next_id


Feed = Literal["whole", "bytes", "lines"]


def load(name: str) -> list[dict[str, Any]]:
    with open(FIXTURES / f"{name}.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def fixture_names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.jsonl"))


def command_from_json(raw: dict[str, Any]) -> DriverCommand | None:
    ((tag, fields),) = raw.items()
    match tag:
        case "StartTurn":
            return StartTurn(**fields)
        case "Respond":
            answer = answer_from_wire(fields["answer"], "answer")
            return Respond(
                request_id=fields["request_id"], answer=answer, message=fields["message"]
            )
        case "Interrupt":
            return Interrupt(fields["turn_id"])
        case "Withdraw":
            return Withdraw(fields["request_id"])
        case "Configure":
            return Configure(option=fields["option"], value=fields["value"])
        case "Compact":
            return Compact()
    return None  # Initialize, Reply: not driver commands


class Replay:
    def __init__(self, name: str) -> None:
        # As the driver does: the session id it launched with is the known token.
        session = str(uuid.uuid5(NAMESPACE, f"{name}-session"))
        self.protocol = ClaudeProtocol(new_id=fixture_ids(name), resume_token=session)
        self.produced: list[DriverEvent] = []
        self.wrote: list[bytes] = []

    def feed(self, lines: list[bytes], how: Feed) -> None:
        if not lines:
            return
        data = b"".join(line + b"\n" for line in lines)
        if how == "whole":
            chunks = [data]
        elif how == "lines":
            chunks = [line + b"\n" for line in lines]
        else:
            chunks = [data[i : i + 1] for i in range(len(data))]
        for chunk in chunks:
            self.produced.extend(self.protocol.feed(chunk))

    def command(self, record: dict[str, Any]) -> None:
        raw = record["command"]
        expected = record["out"].encode() + b"\n"
        if "Initialize" in raw:
            data = self.protocol.initialize()
        elif "Reply" in raw:
            data = self.protocol.data_to_send()
        else:
            command = command_from_json(raw)
            assert command is not None, raw
            data, events = self.protocol.send(command)
            self.produced.extend(events)
        assert data == expected, f"wrote {data!r}, recorded {expected!r}"
        self.wrote.append(data)


def replay(name: str, feed: Feed = "whole", trailing: bytes = b"") -> Replay:
    run = Replay(name)
    pending: list[bytes] = []
    records = load(name)
    index = 0
    while index < len(records):
        record = records[index]
        if "in" in record:
            pending.append(record["in"].encode())
            index += 1
            continue
        run.feed(pending, feed)
        pending = []
        # One command can write several lines (none do today); match the first.
        run.command(record)
        index += 1
    run.feed(pending, feed)
    if trailing:
        run.produced.extend(run.protocol.feed(trailing))
    run.produced.extend(run.protocol.end())
    return run


def as_event(kind: EventKind, extensions: dict[str, Any] | None = None) -> dict[str, Any]:
    event = Event(sequence=1, session_id="s1", kind=kind, extensions=extensions or {})
    wire = event.to_wire()
    check("line-protocol.schema.json", "Event", wire)
    return wire


def check_produced(produced: Iterable[DriverEvent]) -> None:
    """Every event kind the protocol produced is valid on the line protocol."""
    for item in produced:
        if isinstance(item, Emitted):
            as_event(item.kind, wire_extensions(item, None))
        elif isinstance(item, RequestAsked):
            as_event(RequestOpened(item.request), item.extensions)
