"""Copilot's tools and permission prompts, in corral's tool vocabulary.

Pure functions over decoded JSON: a tool name (plus its MCP server, if any)
gives a `ToolKind`; its arguments give a `ToolInput`; a `permissionRequest`
(the seed's `PermissionRequest` union, told apart by `kind`) gives the tool
the request is about, the detail to show, and the choices Copilot accepts.
Nothing here keeps state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.events import (
    CommandInput,
    FileDiff,
    Mcp,
    NoInput,
    PathInput,
    PatternInput,
    PermissionChoice,
    RawTool,
    TextInput,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from .._inputs import ArgumentKeys, Reader
from .._tools import first_text

__all__ = [
    "PermissionPrompt",
    "named_tool",
    "permission_tool",
    "session_approval",
    "tool_input",
    "tool_kind",
    "tool_title",
]

_KINDS: Mapping[str, ToolKind] = {
    **dict.fromkeys(("bash", "powershell", "local_shell", "shell"), ToolKind.EXECUTE),
    **dict.fromkeys(("write_bash", "read_bash", "stop_bash", "list_bash"), ToolKind.EXECUTE),
    **dict.fromkeys(("view", "read", "read_file"), ToolKind.READ),
    **dict.fromkeys(
        ("create", "edit", "str_replace", "str_replace_editor", "write", "apply_patch", "insert"),
        ToolKind.EDIT,
    ),
    **dict.fromkeys(("grep", "glob", "rg", "search", "find"), ToolKind.SEARCH),
    **dict.fromkeys(("web_fetch", "fetch", "web_search"), ToolKind.FETCH),
    **dict.fromkeys(("think", "report_intent"), ToolKind.THINK),
    **dict.fromkeys(("task",), ToolKind.SUBAGENT),
}


def tool_kind(
    name: str, mcp_server: str | None = None, mcp_tool: str | None = None
) -> ToolKind | Mcp:
    if mcp_server:
        return Mcp(server=mcp_server, tool=mcp_tool or name)
    return _KINDS.get(name, ToolKind.OTHER)


_PATH: Reader = (PathInput, ("path", "file_path", "filePath", "fileName"))
_TEXT: Reader = (TextInput, ("prompt", "description", "intent", "thought"))
_ARGUMENTS = ArgumentKeys(
    command=("command", "cmd", "input"),
    readers={
        **dict.fromkeys((ToolKind.READ, ToolKind.EDIT, ToolKind.DELETE, ToolKind.MOVE), _PATH),
        ToolKind.SEARCH: (PatternInput, ("pattern", "query", "regex")),
        ToolKind.FETCH: (UrlInput, ("url", "uri")),
        ToolKind.SUBAGENT: _TEXT,
        ToolKind.THINK: _TEXT,
    },
)


def tool_input(kind: ToolKind | Mcp, arguments: object) -> ToolInput:
    return _ARGUMENTS.input_of(kind, arguments)


def named_tool(
    tool_id: str,
    name: str,
    kind: ToolKind | Mcp,
    title: str,
    status: ToolStatus,
    arguments: object,
    diffs: tuple[FileDiff, ...] = (),
) -> ToolUpdate:
    """A tool Copilot named, its input read from its arguments (which `raw` keeps as given)."""
    return ToolUpdate(
        id=tool_id,
        kind=kind,
        title=title,
        status=status,
        input=tool_input(kind, arguments),
        diffs=diffs,
        raw=RawTool(name=name, input=arguments),
    )


def tool_title(name: str, arguments: object, *hints: object) -> str:
    """The first non-empty hint (Copilot's own title), else a description, else the name."""
    for hint in hints:
        if isinstance(hint, str) and hint:
            return hint
    if isinstance(arguments, Mapping):
        described = first_text(arguments, "description")
        if described is not None:
            return described
    return name


# ---- permission prompts --------------------------------------------------------

_ASK = (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
_ASK_OR_SESSION = (
    PermissionChoice.ALLOW_ONCE,
    PermissionChoice.ALLOW_ALWAYS,
    PermissionChoice.DENY_ONCE,
)


@attrs.frozen(kw_only=True)
class PermissionPrompt:
    tool: ToolUpdate
    detail: str | None
    options: tuple[PermissionChoice, ...]
    # What "allow for the session" approves (`approve-for-session`'s `approval`).
    session_approval: dict[str, Any] | None = None


def session_approval(kind: str, prompt: Mapping[str, Any]) -> dict[str, Any] | None:
    """The approval Copilot remembers for the session, when the prompt can offer one."""
    match kind:
        case "shell":
            commands = prompt.get("commands")
            names = [
                str(command["identifier"])
                for command in (commands if isinstance(commands, list) else ())
                if isinstance(command, Mapping) and isinstance(command.get("identifier"), str)
            ]
            return {"kind": "commands", "commandIdentifiers": names} if names else None
        case "write" | "read":
            return {"kind": kind}
        case "mcp":
            return {
                "kind": "mcp",
                "serverName": str(prompt.get("serverName", "")),
                "toolName": str(prompt.get("toolName", "")),
            }
    return None


def _about(kind: str, prompt: Mapping[str, Any]) -> tuple[ToolKind | Mcp, ToolInput, str]:
    """What the prompt is about: kind, input and a title, by the prompt's `kind`."""
    match kind:
        case "shell":
            command = str(prompt.get("fullCommandText", ""))
            return ToolKind.EXECUTE, CommandInput(command=command), command
        case "write":
            path = str(prompt.get("fileName", ""))
            return ToolKind.EDIT, PathInput(path), f"Write {path}"
        case "read":
            path = str(prompt.get("path", ""))
            return ToolKind.READ, PathInput(path), f"Read {path}"
        case "url":
            url = str(prompt.get("url", ""))
            return ToolKind.FETCH, UrlInput(url), f"Fetch {url}"
        case "mcp":
            server, name = str(prompt.get("serverName", "")), str(prompt.get("toolName", ""))
            title = str(prompt.get("toolTitle") or name)
            return Mcp(server=server, tool=name), NoInput(), title
        case "memory":
            return ToolKind.OTHER, TextInput(str(prompt.get("fact", ""))), "Remember a fact"
    name = str(prompt.get("toolName") or kind)
    return ToolKind.OTHER, NoInput(), name


def _raw(kind: str, prompt: Mapping[str, Any]) -> RawTool:
    name = str(prompt.get("toolName") or kind)
    arguments = prompt.get("args", prompt.get("toolArgs"))
    return RawTool(name=name, input=arguments)


def _detail(prompt: Mapping[str, Any]) -> str | None:
    parts = [
        str(prompt[key])
        for key in ("intention", "hookMessage", "toolDescription", "warning")
        if isinstance(prompt.get(key), str) and prompt[key]
    ]
    if isinstance(prompt.get("diff"), str) and prompt["diff"]:
        parts.append(prompt["diff"])
    return "\n\n".join(parts) or None


def permission_tool(
    prompt: Mapping[str, Any], known: ToolUpdate | None, fallback_id: str
) -> PermissionPrompt:
    """The request's tool: the known snapshot when there is one, refined by the prompt."""
    kind_name = str(prompt.get("kind", "unknown"))
    kind, about_input, title = _about(kind_name, prompt)
    tool_id = prompt.get("toolCallId")
    diffs: tuple[FileDiff, ...] = ()
    contents = prompt.get("newFileContents")
    if kind_name == "write" and isinstance(contents, str):
        diffs = (FileDiff(path=str(prompt.get("fileName", "")), new_text=contents),)
    if known is not None:
        tool = attrs.evolve(
            known,
            kind=kind if known.kind is ToolKind.OTHER else known.kind,
            input=about_input if isinstance(known.input, NoInput) else known.input,
            diffs=diffs or known.diffs,
        )
    else:
        tool = ToolUpdate(
            id=str(tool_id) if isinstance(tool_id, str) and tool_id else fallback_id,
            kind=kind,
            title=title,
            status=ToolStatus.PENDING,
            input=about_input,
            diffs=diffs,
            raw=_raw(kind_name, prompt),
        )
    approval = session_approval(kind_name, prompt)
    if prompt.get("canOfferSessionApproval") is False:
        approval = None
    return PermissionPrompt(
        tool=tool,
        detail=_detail(prompt),
        options=_ASK if approval is None else _ASK_OR_SESSION,
        session_approval=approval,
    )
