"""`tool_ended` (a tool's last snapshot, spelled out) is `attrs.evolve`'s result."""

from __future__ import annotations

import attrs
import pytest
from corral.pipeline.events import (
    CommandInput,
    FileDiff,
    RawTool,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from corral.sources._snapshots import tool_ended

# Every field set to something other than its default, so a field the copy dropped shows.
_RUNNING = ToolUpdate(
    id="t1",
    kind=ToolKind.EXECUTE,
    title="ls",
    status=ToolStatus.RUNNING,
    input=CommandInput(command="ls", cwd="/w"),
    output="so far",
    diffs=(FileDiff(path="a", old_text="x", new_text="y"),),
    locations=("a",),
    raw=RawTool(name="Bash", input={"command": "ls"}),
)


def test_the_example_sets_every_field_of_a_tool_update() -> None:
    defaults = ToolUpdate(id="", kind=ToolKind.OTHER, title="", status=ToolStatus.PENDING)
    for field in attrs.fields(ToolUpdate):
        assert getattr(_RUNNING, field.name) != getattr(defaults, field.name), field.name


@pytest.mark.parametrize("output", ["done", None])
def test_an_ended_tool_keeps_every_other_field(output: str | None) -> None:
    ended = tool_ended(_RUNNING, ToolStatus.COMPLETED, output)
    assert ended == attrs.evolve(_RUNNING, status=ToolStatus.COMPLETED, output=output)


def test_an_ended_tool_takes_the_diffs_given() -> None:
    ended = tool_ended(_RUNNING, ToolStatus.FAILED, "no", ())
    assert ended == attrs.evolve(_RUNNING, status=ToolStatus.FAILED, output="no", diffs=())
