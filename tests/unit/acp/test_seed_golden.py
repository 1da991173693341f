"""Golden wires built from the ACP reference seed, for what no real agent sends offline.

None of the recorded agents emits `notice`, `compaction`, `elicitation/create`
or `session/set_model` against the mock model, so these wires are written
from the seed (`pipeline/schema/acp-moonacp-reference.txt`: its `Notice`, `Compaction`,
`CompactionSummary`, `FormRequest` / `UrlRequest` and the official SDK's
wire names). Each `tests/fixtures/acp/seed/NAME.wire.jsonl` is replayed
sans-IO (`AcpReplay`, the live driver's own `Translator`) and its driver
events must equal `NAME.expected.json`; the events then run through a real
engine and every event that comes out is checked against the line-protocol
schema. A coverage test fails when the seed's `SessionUpdate` names a shape
that has neither a mapping nor an entry in the documented ignore list.
"""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path

import attrs
import orjson
import pytest
from corral.pipeline.driver import DriverEvent, Emitted
from corral.pipeline.events import (
    StopReason,
    stop_to_wire,
)
from corral.sources.acp._translate import Translator

from tests.support.schema import check
from tests.unit.acp.test_golden import replay, through_engine

SEED_FIXTURES = Path(__file__).parents[2] / "fixtures" / "acp" / "seed"
SEED = Path(__file__).parents[3] / "pipeline" / "schema" / "acp-moonacp-reference.txt"
NAMES = sorted(p.name.removesuffix(".wire.jsonl") for p in SEED_FIXTURES.glob("*.wire.jsonl"))

# The seed's `SessionUpdate` variants and the `sessionUpdate` tag each travels as.
WIRE_TAGS = {
    "UserMessageChunk": "user_message_chunk",
    "AgentMessageChunk": "agent_message_chunk",
    "AgentThoughtChunk": "agent_thought_chunk",
    "ToolCall": "tool_call",
    "ToolCallUpdate": "tool_call_update",
    "Plan": "plan",
    "AvailableCommands": "available_commands_update",
    "ModeChanged": "current_mode_update",
    "ConfigOptionChanged": "config_option_update",
    "SessionInfoChanged": "session_info_update",
    "Usage": "usage_update",
    "Notice": "notice",
    "Compaction": "compaction",
    "CompactionSummary": "compaction_summary",
}
# Shapes deliberately left a Diagnostic, with why (none today).
IGNORED: dict[str, str] = {}
# One well-formed example of each tag, enough for the translator to map it.
EXAMPLES: dict[str, dict[str, object]] = {
    "user_message_chunk": {"content": {"type": "text", "text": "hi"}},
    "agent_message_chunk": {"content": {"type": "text", "text": "hi"}},
    "agent_thought_chunk": {"content": {"type": "text", "text": "hm"}},
    "tool_call": {"toolCallId": "t1", "title": "ls", "kind": "execute", "status": "pending"},
    "tool_call_update": {"toolCallId": "t1", "status": "completed"},
    "plan": {"entries": [{"content": "a", "priority": "high", "status": "pending"}]},
    "available_commands_update": {"availableCommands": [{"name": "x", "description": "y"}]},
    "current_mode_update": {"currentModeId": "plan"},
    "config_option_update": {"configOptions": []},
    "session_info_update": {"title": "A title"},
    "usage_update": {"used": 10, "size": 100},
    "notice": {"severity": "info", "title": "hello"},
    "compaction": {"compactionId": "c1", "status": "completed"},
    "compaction_summary": {"compactionId": "c1", "content": {"type": "text", "text": "s"}},
}


def _plain(value: object) -> object:
    if isinstance(value, StopReason):
        return stop_to_wire(value)
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | frozenset):
        return [_plain(v) for v in value]
    raise TypeError(type(value))


# What corral counts events by, not what they mean (in `extensions` or typed fields).
_MARKERS = frozenset({"extensions", "unknown_frame", "problem"})


def describe(event: DriverEvent) -> object:
    """One driver event as plain JSON: its class and the fields it sets (not `extensions`)."""
    fields = {
        name: value
        for name, value in attrs.asdict(event, recurse=False).items()
        if name not in _MARKERS and value is not None
    }
    return {type(event).__name__: orjson.loads(orjson.dumps(fields, default=_plain))}


def load(name: str) -> bytes:
    return (SEED_FIXTURES / f"{name}.wire.jsonl").read_bytes()


def expected(name: str) -> object:
    return json.loads((SEED_FIXTURES / f"{name}.expected.json").read_text())


def test_every_seed_fixture_has_its_expectation() -> None:
    answers = {p.name.removesuffix(".expected.json") for p in SEED_FIXTURES.glob("*.json")}
    assert NAMES and answers == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_seed_wire_replays_to_its_golden_events(name: str) -> None:
    assert [describe(e) for e in replay(load(name))] == expected(name)


@pytest.mark.parametrize("name", NAMES)
def test_fed_byte_by_byte_a_seed_wire_replays_the_same(name: str) -> None:
    data = load(name)
    assert [describe(e) for e in replay(data, chunk=1)] == [describe(e) for e in replay(data)]


@pytest.mark.parametrize("name", NAMES)
def test_a_seed_wire_makes_schema_valid_events(name: str) -> None:
    events = through_engine(replay(load(name)))
    assert events
    for event in events:
        check("line-protocol.schema.json", "Event", event.to_wire())


def _unknown(event: DriverEvent) -> bool:
    """The translator passed this on as a raw frame it has no place for."""
    if not isinstance(event, Emitted):
        return False
    marked = getattr(event, "unknown_frame", None)  # the typed field, where it exists
    return marked is not None or "corral/unknown_frame" in event.extensions


def test_every_session_update_of_the_seed_is_mapped_or_documented() -> None:
    block = re.search(r"pub\(all\) enum SessionUpdate \{(.*?)\}", SEED.read_text(), re.S)
    assert block is not None
    variants = re.findall(r"^\s*(\w+)\(", block.group(1), re.M)
    assert variants, "the seed's SessionUpdate lists no variants"
    assert set(variants) == set(WIRE_TAGS), "a SessionUpdate variant without its wire tag"
    unmapped = []
    for variant in variants:
        tag = WIRE_TAGS[variant]
        if tag in IGNORED:
            continue
        translator = Translator()
        translator.update({"sessionUpdate": "tool_call", **EXAMPLES["tool_call"]})
        events = translator.update({"sessionUpdate": tag, **EXAMPLES[tag]})
        if any(_unknown(e) for e in events):
            unmapped.append(tag)
    assert unmapped == []
