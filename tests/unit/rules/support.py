"""Builders shared by the policy tests: requests, contexts, policies from text."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from corral.pipeline.commands import PermissionMode
from corral.pipeline.events import (
    Choice,
    CommandInput,
    FileDiff,
    Mcp,
    NoInput,
    PathInput,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from corral.pipeline.policy import PolicyContext
from corral.pipeline.rules import RulePolicy, parse_policy

ALL = tuple(PermissionChoice)


def permission(
    kind: ToolKind | Mcp | str,
    *,
    command: str | None = None,
    cwd: str | None = None,
    path: str | None = None,
    url: str | None = None,
    diffs: Sequence[str] = (),
    locations: Sequence[str] = (),
    options: Sequence[PermissionChoice] = ALL,
    request_id: str = "r1",
    tool_id: str = "tool1",
) -> PermissionRequest:
    tool_kind = ToolKind(kind) if isinstance(kind, str) else kind
    tool_input: ToolInput = NoInput()
    if command is not None:
        tool_input = CommandInput(command=command, cwd=cwd)
    elif url is not None:
        tool_input = UrlInput(url)
    elif path is not None:
        tool_input = PathInput(path)
    return PermissionRequest(
        id=request_id,
        tool=ToolUpdate(
            id=tool_id,
            kind=tool_kind,
            title="a tool",
            status=ToolStatus.PENDING,
            input=tool_input,
            diffs=tuple(FileDiff(path=p, new_text="x") for p in diffs),
            locations=tuple(locations),
        ),
        options=tuple(options),
    )


def question(
    *texts: str, choices: Sequence[str] = (), multi: bool = False, free: bool = False
) -> QuestionRequest:
    return QuestionRequest(
        id="q",
        questions=tuple(
            Question(
                id=f"q{index}",
                text=text,
                choices=tuple(Choice(id=f"c{i}", label=label) for i, label in enumerate(choices)),
                multi_select=multi,
                allows_free_text=free or not choices,
            )
            for index, text in enumerate(texts, start=1)
        ),
    )


def context(
    session_dir: str, *, agent: str = "claude", mode: PermissionMode = PermissionMode.ASK
) -> PolicyContext:
    return PolicyContext(agent_id=agent, session_dir=session_dir, mode=mode)


def policy(text: str, home: str) -> RulePolicy:
    return parse_policy(textwrap.dedent(text), source="test.toml", home=home)
