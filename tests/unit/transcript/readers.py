"""Test readers of native transcripts, and the planted-secret fixtures they read.

The real readers live in `sources/claude`, `sources/codex` and
`sources/copilot` (`read_native_transcript`). These small ones read just
what the fixtures in `tests/fixtures/transcripts/` hold, so the import
pipeline (detection, replay through the engine, writing, idempotence,
search) is tested before, and independently of, the real readers.

`planted_copy(tmp)` copies the fixtures with their placeholders replaced by
secret-shaped values built here at run time (no secret-looking literal is
ever committed); `SECRETS` lists them so tests can check none reaches disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from corral.pipeline.driver import (
    Emitted,
    PromptSent,
    ReplayItem,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    CommandInput,
    Completed,
    ContextUsage,
    MessageEnded,
    PathInput,
    ReasoningDelta,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"

SECRETS = {
    "@@OPENAI_KEY@@": "sk-" + "proj-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE",
    "@@BEARER_TOKEN@@": "eyJ" + "hbGciOiJIUzI1NiJ9abcdefghijklmnop",
    "@@GITHUB_TOKEN@@": "gh" + "p_" + "0123456789abcdefghijABCDEFGHIJ0123456789",
}
WORDS = {"claude": "pelican", "codex": "quokka", "copilot": "narwhal"}


def planted_copy(target: Path) -> dict[str, Path]:
    """The fixtures under `target`, secrets planted; format id -> file."""
    copies: dict[str, Path] = {}
    for source in sorted(FIXTURES.glob("*/*.jsonl")):
        text = source.read_text("utf-8")
        for placeholder, secret in SECRETS.items():
            text = text.replace(placeholder, secret)
        copy = target / source.parent.name / source.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text, "utf-8")
        copies[source.parent.name] = copy
    return copies


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            yield json.loads(line)


def _ns(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1e9)


def _tool(tool_id: str, kind: ToolKind, title: str, status: ToolStatus, **more: Any) -> Emitted:
    return Emitted(
        kind=ToolUpdated(ToolUpdate(id=tool_id, kind=kind, title=title, status=status, **more))
    )


def _text(message_id: str, text: str) -> list[ReplayItem]:
    return [
        Emitted(kind=TextDelta(message_id=message_id, text=text)),
        Emitted(kind=MessageEnded(message_id)),
    ]


def read_claude(path: Path) -> Iterator[ReplayItem]:
    commands: dict[str, str] = {}
    for line in _lines(path):
        message = line.get("message") or {}
        if line.get("type") == "user" and isinstance(message.get("content"), str):
            yield PromptSent(text=message["content"], at_ns=_ns(line["timestamp"]))
            yield TurnBegan()
            continue
        for block in message.get("content") or []:
            if block["type"] == "text":
                yield Emitted(kind=TextDelta(message_id=message["id"], text=block["text"]))
            elif block["type"] == "tool_use":
                commands[block["id"]] = block["input"]["command"]
                yield _tool(block["id"], ToolKind.EXECUTE, block["name"], ToolStatus.RUNNING,
                            input=CommandInput(command=block["input"]["command"]))  # fmt: skip
            elif block["type"] == "tool_result":
                tool_id = block["tool_use_id"]
                yield _tool(tool_id, ToolKind.EXECUTE, "Bash", ToolStatus.COMPLETED,
                            input=CommandInput(command=commands[tool_id]), output=block["content"])  # fmt: skip
        if message.get("stop_reason") == "end_turn":
            yield Emitted(kind=MessageEnded(message["id"]))
            yield TurnFinished(stop=Completed())


def read_codex(path: Path) -> Iterator[ReplayItem]:
    for line in _lines(path):
        if line["type"] != "event_msg":
            continue
        payload = line["payload"]
        match payload["type"]:
            case "user_message":
                yield PromptSent(text=payload["message"], at_ns=_ns(line["timestamp"]))
            case "task_started":
                yield TurnBegan()
            case "agent_reasoning":
                yield Emitted(kind=ReasoningDelta(message_id="r1", text=payload["text"]))
            case "exec_command_begin" | "exec_command_end" as kind:
                done = kind == "exec_command_end"
                yield _tool(payload["call_id"], ToolKind.EXECUTE, payload["command"][-1],
                            ToolStatus.COMPLETED if done else ToolStatus.RUNNING,
                            input=CommandInput(command=payload["command"][-1], cwd=payload["cwd"]),
                            output=payload.get("aggregated_output"))  # fmt: skip
            case "agent_message":
                yield from _text("a1", payload["message"])
            case "token_count":
                usage = payload["info"]["last_token_usage"]
                yield Emitted(
                    kind=ContextUsage(used_tokens=usage["total_tokens"]),
                    extensions={"corral/tokens": {"input": usage["input_tokens"],
                                                  "output": usage["output_tokens"]}},
                )  # fmt: skip
            case "task_complete":
                yield TurnFinished(stop=Completed())


def read_copilot(path: Path) -> Iterator[ReplayItem]:
    for line in _lines(path):
        data = line["data"]
        match line["type"]:
            case "user.message":
                yield PromptSent(text=data["content"], at_ns=_ns(line["timestamp"]))
            case "assistant.turn_start":
                yield TurnBegan()
            case "assistant.message":
                yield from _text(data["messageId"], data["content"])
            case "tool.execution_start":
                arguments = data["arguments"]
                yield _tool(data["toolCallId"], ToolKind.EDIT, data["toolName"], ToolStatus.RUNNING,
                            input=PathInput(arguments["path"]), output=arguments.get("file_text"))  # fmt: skip
            case "tool.execution_complete":
                yield _tool(data["toolCallId"], ToolKind.EDIT, "create", ToolStatus.COMPLETED,
                            output=data["result"]["content"])  # fmt: skip
            case "assistant.usage":
                yield Emitted(
                    kind=ContextUsage(used_tokens=data["inputTokens"] + data["outputTokens"]),
                    extensions={"corral/tokens": {"input": data["inputTokens"],
                                                  "output": data["outputTokens"]}},
                )  # fmt: skip
            case "assistant.turn_end":
                yield TurnFinished(stop=Completed())


TEST_READERS = {"claude": read_claude, "codex": read_codex, "copilot": read_copilot}
