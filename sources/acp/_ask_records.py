"""The records of the agent's open asks, and the refusals made of them.

Kept apart from `_asks.py`, which holds the bookkeeping (`Asks`): here are
only the frozen records of what one ask was when it opened (the tool as the
policy judged it, the command as parsed; a file ask is kept as the
`ReadFile` / `WriteFile` an allow performs, its tool still pending), a
command grant, the reading of an ACP permission request's options, and the
`ReplyError` a refused or withdrawn file or command ask answers with. Pure
data and pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ...pipeline.events import PermissionChoice, ToolStatus, ToolUpdate
from ._actions import ReadFile, ReplyError, WriteFile
from ._elicit import Form
from ._frames import REQUEST_CANCELLED
from ._terminal import CommandSpec

__all__ = [
    "Grant",
    "OpenCommand",
    "OpenElicit",
    "OpenPermission",
    "offered_choices",
    "refused",
    "refused_command",
    "what_was_judged",
]

_CHOICES = {
    "allow_once": PermissionChoice.ALLOW_ONCE,
    "allow_always": PermissionChoice.ALLOW_ALWAYS,
    "reject_once": PermissionChoice.DENY_ONCE,
    "reject_always": PermissionChoice.DENY_ALWAYS,
}


@attrs.frozen(kw_only=True)
class OpenPermission:
    rpc_id: int | str
    option_ids: Mapping[PermissionChoice, str]
    tool_id: str
    judged: ToolUpdate  # the tool as the policy saw it


@attrs.frozen(kw_only=True)
class OpenCommand:
    rpc_id: int | str
    spec: CommandSpec
    tool: ToolUpdate


@attrs.frozen(kw_only=True)
class OpenElicit:
    rpc_id: int | str
    form: Form


@attrs.frozen
class Grant:
    command: str  # byte for byte, as judged
    cwd: str | None  # as judged, when the tool named one


def offered_choices(raw_options: object) -> dict[PermissionChoice, str]:
    offered: dict[PermissionChoice, str] = {}
    for option in raw_options if isinstance(raw_options, list) else []:
        if not isinstance(option, dict) or not isinstance(option.get("optionId"), str):
            continue
        choice = _CHOICES.get(str(option.get("kind")))
        if choice is not None and choice not in offered:
            offered[choice] = option["optionId"]
    return offered


def what_was_judged(tool: ToolUpdate) -> tuple[object, ...]:
    """The parts of a tool a decision is about (not its status or output)."""
    raw = None if tool.raw is None else (tool.raw.name, repr(tool.raw.input))
    return (tool.kind, tool.title, tool.input, raw, tool.diffs, tool.locations)


def refused(asked: WriteFile | ReadFile, how: str, why: str | None = None) -> ReplyError:
    tool = attrs.evolve(asked.tool, status=ToolStatus.CANCELLED)
    verb = "writing" if isinstance(asked, WriteFile) else "reading"
    message = f"{verb} {asked.judged.path} was {how}" + (f": {why}" if why else "")
    return ReplyError(asked.rpc_id, REQUEST_CANCELLED, message, tool)


def refused_command(asked: OpenCommand, why: str) -> ReplyError:
    tool = attrs.evolve(asked.tool, status=ToolStatus.CANCELLED)
    message = f"corral did not run `{asked.spec.line}`: {why}"
    return ReplyError(asked.rpc_id, REQUEST_CANCELLED, message, tool, warning=message)
