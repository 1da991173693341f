"""`item_size`: what a pipeline item keeps alive, as the byte-bounded channels count it."""

from __future__ import annotations

import orjson
from corral.actors.engine._output import Output
from corral.pipeline.driver import Emitted, InfoChanged
from corral.pipeline.events import (
    CommandInput,
    ContextCompacted,
    Event,
    SlashCommand,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnContext,
)
from corral.pipeline.sizes import ITEM_OVERHEAD, item_size

MIB = 1024 * 1024


def _tool(output: str) -> Emitted:
    tool = ToolUpdate(
        id="t1",
        kind=ToolKind.EXECUTE,
        title="make",
        status=ToolStatus.COMPLETED,
        input=CommandInput(command="make", cwd="/w"),
        output=output,
    )
    return Emitted(kind=ToolUpdated(tool))


def test_a_delta_counts_its_text() -> None:
    assert item_size(Emitted(kind=TextDelta(message_id="m", text="x" * 1000))) == (
        ITEM_OVERHEAD + 1000
    )


def test_a_large_string_deep_in_an_attrs_value_counts_whole() -> None:
    small, large = item_size(_tool("ok")), item_size(_tool("y" * MIB))
    assert abs(large - small - MIB) <= 64


def test_a_list_of_many_attrs_values_counts_each_of_them() -> None:
    commands = tuple(SlashCommand(name=f"c{n}", description="d" * 100) for n in range(100))
    assert item_size(InfoChanged(commands=commands)) >= 100 * 100


def test_what_json_cannot_hold_is_still_measured() -> None:
    # A non-string key and bytes: orjson refuses them, the walk counts them.
    raw = Emitted(kind=TextDelta(message_id="m", text="t"), extensions={"x": {1: b"z" * MIB}})
    assert item_size(raw) >= MIB


def test_a_set_counts_its_members() -> None:
    members = frozenset({"a" * 100_000, "b" * 100_000})
    item = Emitted(kind=TextDelta(message_id="m", text="t"), extensions={"x": members})
    assert item_size(item) >= 200_000


def _measured_event(said: Emitted) -> Event:
    """The event the engine makes of `said` once a channel measured `said`."""
    output = Output(session_id="s-1", wall_clock_ns=lambda: 1_700_000_000_123_456_789)
    item_size(said)
    output.emit(said.kind, turn_info=TurnContext(id="turn-1"), said=said)
    event = output.outbox.popleft()
    assert isinstance(event, Event)
    return event


def test_an_event_counts_its_json_and_keeps_it_for_the_sinks() -> None:
    event = _measured_event(_tool("made " * 50))
    size = item_size(event)
    encoded = event.json()
    assert size == ITEM_OVERHEAD + len(encoded)
    assert event.json() is encoded  # measured once: the sinks write these very bytes


def test_a_kind_measured_on_its_way_in_encodes_as_it_would_have() -> None:
    # The event reuses the kind's JSON its driver event made when measured;
    # its bytes are still exactly those of encoding it from scratch.
    said = _tool("out\n" * 20)
    event = _measured_event(said)
    assert said.encoded_kind() is not None
    assert event.json() == orjson.dumps(event.to_wire())


def test_an_event_of_another_kind_than_its_driver_event_encodes_its_own() -> None:
    said = _tool("first")
    item_size(said)
    output = Output(session_id="s-1", wall_clock_ns=lambda: 0)
    other = ContextCompacted()
    output.emit(other, turn_info=None, said=said)  # the engine's own kind, the driver's fields
    event = output.outbox.popleft()
    assert isinstance(event, Event)
    assert orjson.loads(event.json())["kind"] == other.to_wire()
