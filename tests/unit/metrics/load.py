"""A mock script with a bit of everything, and an app that drives it at random.

Turn i of the script answers the i-th prompt of a session:
  0: text, two Execute tools asking permission (`ls`, and `rm -rf /`, which
     the rm-root guard denies where the mode would allow it), usage, Completed
  1: reasoning, a failing Read tool, a question, usage, Failed
  2: an MCP tool, a plan, a compaction, a warning, Refused (in process mode
     also a line that is not JSON and a frame of an unknown type)
  3: a long pause the app cancels (Cancelled)
  4 to 3 + extra_models: usage by `model-<n>` (one model per turn: the
     engine reports a turn's usage once, at its end), Completed
  4 + extra_models: the agent dies (the session fails with ProcessExited)
Usage steps carry a token breakdown and a model (`model-a`, `model-b`).
`drive(runtime, rng, agents)` opens one session on a random agent and
permission mode, prompts it a random number of times, answers requests at
random, and closes it (unless the agent died).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from corral.actors.handle import Session
from corral.actors.runtime import Runtime
from corral.pipeline.commands import PermissionMode
from corral.pipeline.events import (
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    QuestionRequest,
    QuestionsAnswer,
    RequestOpened,
    TurnEnded,
    TurnStarted,
)

__all__ = ["SCRIPT", "drive", "script"]


def tool(tool_id: str, kind: Any, status: str, command: str | None = None) -> dict[str, Any]:
    return {
        "id": tool_id,
        "kind": kind,
        "title": f"{tool_id} call",
        "status": status,
        "input": "None" if command is None else {"Command": {"command": command, "cwd": None}},
        "output": None,
        "diffs": [],
        "locations": [],
        "raw": None,
    }


def emit_tool(tool_id: str, kind: Any, status: str, command: str | None = None) -> dict[str, Any]:
    return {"Emit": {"ToolUpdated": tool(tool_id, kind, status, command)}}


def permission(
    request_id: str, tool_id: str, kind: Any, command: str | None = None
) -> dict[str, Any]:
    body = {
        "id": request_id,
        "tool": tool(tool_id, kind, "Pending", command),
        "options": ["AllowOnce", "DenyOnce"],
        "detail": None,
    }
    return {"Emit": {"RequestOpened": {"Permission": body}}}


QUESTION = {
    "Emit": {
        "RequestOpened": {
            "Question": {
                "id": "q1",
                "questions": [
                    {
                        "id": "which",
                        "text": "Which one?",
                        "header": None,
                        "multi_select": False,
                        "allows_free_text": False,
                        "choices": [
                            {"id": "a", "label": "A", "description": None},
                            {"id": "b", "label": "B", "description": None},
                        ],
                    }
                ],
            }
        }
    }
}


COMPLETED = {"End": {"Completed": {"source": "Protocol"}}}


def usage(used: int, cost: float | None, model: str) -> dict[str, Any]:
    """Usage with a token breakdown; `cost` is the session's running total, if known."""
    tokens = {"input": used // 2, "output": used // 8, "cache_read": used // 4}
    tokens |= {"cache_write": used // 16, "reasoning": used // 32}
    body = {"used_tokens": used, "window_tokens": 200000, "tokens": tokens, "model": model}
    return {"Usage": body if cost is None else body | {"cost_usd": cost}}


def script(
    *, process: bool = False, pause_ms: int = 30000, extra_models: int = 0
) -> dict[str, Any]:
    mcp = {"Mcp": {"server": "files", "tool": "stat"}}
    # A child process can also write what is not a mock frame (process mode only).
    misbehaving = [{"Raw": "not json\n"}, {"Raw": '{"Weird": {}}\n'}] if process else []
    return {
        "process": process,
        "turns": [
            [
                {"Emit": {"TextDelta": {"message_id": "m1", "text": "Looking."}}},
                emit_tool("x1", "Execute", "Running"),
                permission("r1", "x1", "Execute", "ls"),
                "AwaitAnswer",
                emit_tool("x1", "Execute", "Completed"),
                emit_tool("x5", "Execute", "Running", "rm -rf /"),
                permission("r5", "x5", "Execute", "rm -rf /"),
                "AwaitAnswer",
                emit_tool("x5", "Execute", "Failed"),
                usage(12000, 0.02, "model-a"),
                COMPLETED,
            ],
            [
                {"Emit": {"ReasoningDelta": {"message_id": "m2", "text": "Hmm."}}},
                emit_tool("x2", "Read", "Running"),
                emit_tool("x2", "Read", "Failed"),
                QUESTION,
                "AwaitAnswer",
                usage(30000, 0.05, "model-b"),
                {"End": {"Failed": {"message": "could not read"}}},
            ],
            [
                emit_tool("x3", mcp, "Running"),
                emit_tool("x3", mcp, "Completed"),
                {"Emit": {"PlanUpdated": {"entries": [{"text": "step", "status": "Pending"}]}}},
                {"Emit": "ContextCompacted"},
                {"Emit": {"Diagnostic": {"level": "Warning", "message": "slow"}}},
                *misbehaving,
                {"End": "Refused"},
            ],
            [
                {"Emit": {"TextDelta": {"message_id": "m4", "text": "Thinking..."}}},
                {"Sleep": pause_ms},
            ],
            *([usage(100, None, f"model-{n}"), COMPLETED] for n in range(extra_models)),
            ["Die"],
        ],
    }


SCRIPT = script()


def answer_for(request: object, rng: random.Random) -> Any:
    if isinstance(request, PermissionRequest):
        return PermissionAnswer(
            rng.choice([PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE])
        )
    assert isinstance(request, QuestionRequest)
    return QuestionsAnswer((ChoicesAnswer((rng.choice(["a", "b"]),)),))


async def drive(runtime: Runtime, rng: random.Random, agents: Sequence[str]) -> None:
    """One random session, start to end."""
    mode = rng.choice([PermissionMode.ASK, PermissionMode.ASK, PermissionMode.AUTO_APPROVE])
    session = await runtime.open(rng.choice(agents), ".", permission_mode=mode)
    await _play(session, rng)
    await session.wait_closed()


async def _play(session: Session, rng: random.Random) -> None:
    prompts = rng.randint(1, 5)
    sent = 1
    await session.prompt("go")
    async for event in session.events():
        match event.kind:
            case RequestOpened(request=request):
                await session.answer(request.id, answer_for(request, rng))
            case TurnStarted() if sent == 4:
                await session.cancel()
            case TurnEnded():
                if sent < prompts:
                    sent += 1
                    await session.prompt("more")
                else:
                    await session.close()
