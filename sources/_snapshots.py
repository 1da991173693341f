"""A tool's last snapshot, made from the one before it (what every source's tool end shares).

Each source keeps a tool's `ToolUpdate` until the agent says the call
ended, then shows it once more with its final status and output (and,
where the agent reports them, its diffs). `tool_ended` is that copy, spelled
out field by field rather than through `attrs.evolve` (which looks each
field up by name on every call): a tool's end is on every tool call's
path. A test holds it to `attrs.evolve`, so a field added to `ToolUpdate`
cannot be dropped here unnoticed.
"""

from __future__ import annotations

from ..pipeline.events import FileDiff, ToolStatus, ToolUpdate

__all__ = ["tool_ended"]


def tool_ended(
    tool: ToolUpdate,
    status: ToolStatus,
    output: str | None,
    diffs: tuple[FileDiff, ...] | None = None,
) -> ToolUpdate:
    """`tool` with this status and output (and these diffs, unless None), as `attrs.evolve`."""
    return ToolUpdate(
        id=tool.id,
        kind=tool.kind,
        title=tool.title,
        status=status,
        input=tool.input,
        output=output,
        diffs=tool.diffs if diffs is None else diffs,
        locations=tool.locations,
        raw=tool.raw,
    )
