"""`item_size`: what a pipeline item keeps alive, as the byte-bounded channels count it."""

from __future__ import annotations

from corral.pipeline.driver import Emitted, InfoChanged
from corral.pipeline.events import (
    CommandInput,
    SlashCommand,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
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
