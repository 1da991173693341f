"""Choose the mock model's answer from one request, with no memory.

Each API adapter reduces its request to a `Conversation`: what the last
user-side message is (user text or a tool result), its text, and the tools
the request offers. `decide(conversation)` maps that to a `Reply`:

- the last message is a tool result → `TextReply` "Tool said: <first line>";
- no tools offered (titles, summaries, side calls) → a short `TextReply`;
- a trigger in the user text (see the package header for the grammar) →
  a `ToolCallReply` of the agent's own tool, or a slow `TextReply`;
- anything else → `TextReply` "You said: <user text>".

Tools are found by name among those offered, and their arguments are built
from each tool's JSON schema (argument names, array-or-string commands,
required fields filled minimally), so one mock serves every agent.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._schema import fill_object

__all__ = [
    "Conversation",
    "LastMessage",
    "OfferedTool",
    "Reply",
    "TextReply",
    "ToolCallReply",
    "decide",
    "first_line",
    "split_deltas",
]

SLOW_DEFAULT_DELTAS = 30
SHELL_TOOLS = (
    "Bash",
    "mcp__acp__Bash",  # the Claude ACP adapter's Bash when the client serves terminals
    "shell_command",
    "shell",
    "exec_command",
    "run_shell_command",
    "bash",
    "powershell",
)
WRITE_TOOLS = ("Write", "write_file", "write", "create", "str_replace_based_edit_tool")
PATCH_TOOLS = ("apply_patch",)
ASK_TOOLS = ("AskUserQuestion", "request_user_input", "ask_user", "question")

_TOOL_RE = re.compile(r"CORRAL_TOOL:[ \t]*(?P<command>[^\r\n]+)")
_WRITE_RE = re.compile(r"CORRAL_WRITE:[ \t]*(?P<path>\S+)[ \t]+(?P<text>[^\r\n]*)")
_ASK_RE = re.compile(r"CORRAL_ASK:[ \t]*(?P<question>[^\r\n]+)")
_SLOW_RE = re.compile(r"CORRAL_SLOW(?::(?P<count>\d+))?")
# Tool-output envelopes that agents wrap around a command's own output.
_ENVELOPE_RE = re.compile(
    r"^(exit code:|wall time:|chunk id:|original token count:|process exited|"
    r"process running|process group pgid:|command:|directory:|<exited with|<shellid:|</?[\w-]+>$)",
    re.IGNORECASE,
)
_OUTPUT_PREFIX_RE = re.compile(r"^(output|stdout):\s*", re.IGNORECASE)


LastMessage = Literal["user", "tool_result", "none"]


@dataclass(frozen=True, kw_only=True)
class OfferedTool:
    """A tool the request offers; `freeform` tools take raw text, not JSON."""

    name: str
    schema: Mapping[str, Any]
    freeform: bool = False


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """What the mock reads from a request."""

    last: LastMessage
    text: str
    tools: tuple[OfferedTool, ...]
    message_count: int


@dataclass(frozen=True, kw_only=True)
class TextReply:
    """Plain text, streamed as `deltas` with `pause` seconds between them."""

    deltas: tuple[str, ...]
    pause: float = 0.0
    label: str = "text"

    @property
    def text(self) -> str:
        return "".join(self.deltas)


@dataclass(frozen=True, kw_only=True)
class ToolCallReply:
    """One call of an offered tool; `arguments` is raw text for freeform tools."""

    tool: OfferedTool
    arguments: dict[str, Any] | str
    call_id: str
    label: str

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


Reply = TextReply | ToolCallReply


def decide(conversation: Conversation, *, slow_pause: float = 1.0) -> Reply:
    """The answer to one request (see the module header)."""
    if conversation.last == "tool_result":
        return TextReply(deltas=split_deltas(f"Tool said: {first_line(conversation.text)}"))
    if not conversation.tools:
        return TextReply(deltas=("Mock title",), label="side")
    text = conversation.text
    seed = f"{conversation.message_count}:{text}"
    if match := _TOOL_RE.search(text):
        return _shell_call(conversation.tools, match["command"].strip(), seed)
    if match := _WRITE_RE.search(text):
        return _write_call(conversation.tools, match["path"], match["text"], seed)
    if match := _ASK_RE.search(text):
        return _ask_call(conversation.tools, match["question"].strip(), seed)
    if match := _SLOW_RE.search(text):
        count = int(match["count"] or SLOW_DEFAULT_DELTAS)
        deltas = tuple(f"slow {n + 1}/{count}. " for n in range(count))
        return TextReply(deltas=deltas, pause=slow_pause, label="slow")
    said = " ".join(text.split())[:500]
    return TextReply(deltas=split_deltas(f"You said: {said}"))


def split_deltas(text: str, parts: int = 3) -> tuple[str, ...]:
    """`text` cut into up to `parts` non-empty pieces, joined back exactly."""
    size = max(1, -(-len(text) // parts))
    return tuple(text[i : i + size] for i in range(0, len(text), size)) or ("",)


def first_line(tool_output: str) -> str:
    """The first line of a command's own output, past the agent's envelope."""
    text = tool_output
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    if isinstance(decoded, Mapping) and isinstance(decoded.get("output"), str):
        text = decoded["output"]
    lines = [_OUTPUT_PREFIX_RE.sub("", line.strip()) for line in text.split("\n")]
    meaningful = [line for line in lines if line and not _ENVELOPE_RE.match(line)]
    return meaningful[0][:300] if meaningful else "(no output)"


def _find(tools: Sequence[OfferedTool], names: Sequence[str]) -> OfferedTool | None:
    by_name = {tool.name: tool for tool in tools}
    return next((by_name[name] for name in names if name in by_name), None)


def _call_id(seed: str, tool: OfferedTool) -> str:
    digest = hashlib.sha256(f"{seed}:{tool.name}".encode()).hexdigest()[:24]
    return f"call_{digest}"


def _properties(tool: OfferedTool) -> Mapping[str, Any]:
    properties = tool.schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _shell_call(tools: Sequence[OfferedTool], command: str, seed: str) -> Reply:
    tool = _find(tools, SHELL_TOOLS)
    if tool is None:
        return TextReply(deltas=(f"No shell tool offered for: {command}",), label="no_tool")
    if tool.freeform:
        return ToolCallReply(
            tool=tool, arguments=command, call_id=_call_id(seed, tool), label="shell"
        )
    properties = _properties(tool)
    key = next((k for k in ("command", "cmd", "commands", "script") if k in properties), "command")
    is_array = "array" in json.dumps(properties.get(key, {}).get("type", ""))
    values: dict[str, Any] = {key: ["bash", "-lc", command] if is_array else command}
    # Optional arguments stay out: some change behaviour (Codex rejects a
    # `justification` without `sandbox_permissions`).
    for name in _required_names(tool):
        lowered = name.lower()
        if "timeout" in lowered:
            values[name] = 60_000 if "ms" in lowered else 60
        elif lowered in ("description", "justification", "reason"):
            values[name] = f"Run {command}"
    arguments = fill_object(tool.schema, values)
    return ToolCallReply(
        tool=tool, arguments=arguments, call_id=_call_id(seed, tool), label="shell"
    )


def _required_names(tool: OfferedTool) -> list[str]:
    required = tool.schema.get("required")
    return [str(r) for r in required] if isinstance(required, list) else []


def _write_call(tools: Sequence[OfferedTool], path: str, text: str, seed: str) -> Reply:
    patch_tool = _find(tools, PATCH_TOOLS)
    tool = _find(tools, WRITE_TOOLS)
    if tool is None and patch_tool is not None:
        patch = f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"
        arguments: dict[str, Any] | str = patch
        if not patch_tool.freeform:
            key = next(iter(_properties(patch_tool)), "input")
            arguments = fill_object(patch_tool.schema, {key: patch})
        return ToolCallReply(
            tool=patch_tool, arguments=arguments, call_id=_call_id(seed, patch_tool), label="write"
        )
    if tool is None:
        command = f"printf '%s\\n' {shlex.quote(text)} > {shlex.quote(path)}"
        return _shell_call(tools, command, seed)
    properties = _properties(tool)
    values: dict[str, Any] = {"command": "create"}
    for name in properties:
        lowered = name.lower()
        if "path" in lowered or lowered in ("file", "filename"):
            values[name] = path
        elif lowered in ("content", "contents", "file_text", "text", "new_str"):
            values[name] = text + "\n"
    arguments = fill_object(tool.schema, values)
    return ToolCallReply(
        tool=tool, arguments=arguments, call_id=_call_id(seed, tool), label="write"
    )


def _ask_call(tools: Sequence[OfferedTool], question: str, seed: str) -> Reply:
    tool = _find(tools, ASK_TOOLS)
    if tool is None:
        return TextReply(deltas=(f"No question tool offered; I ask: {question}",), label="no_tool")
    properties = _properties(tool)
    questions_schema = properties.get("questions", {})
    item_schema = questions_schema.get("items", {}) if isinstance(questions_schema, Mapping) else {}
    option_schema = _items_of(item_schema, "options") or _items_of(tool.schema, "options")
    options = [
        fill_object(option_schema, {"label": label, "description": f"Answer {label}"})
        if option_schema
        else label
        for label in ("Yes", "No")
    ]
    item_values = {
        "question": question,
        "header": "Question",
        "id": "corral_question",
        "options": options,
        "multiSelect": False,
        "isOther": False,
    }
    if "questions" in properties:
        arguments = fill_object(tool.schema, {"questions": [fill_object(item_schema, item_values)]})
    else:
        arguments = fill_object(tool.schema, item_values)
    return ToolCallReply(tool=tool, arguments=arguments, call_id=_call_id(seed, tool), label="ask")


def _items_of(schema: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping):
        return {}
    prop = schema.get("properties", {}).get(name, {})
    items = prop.get("items", {}) if isinstance(prop, Mapping) else {}
    return items if isinstance(items, Mapping) else {}
