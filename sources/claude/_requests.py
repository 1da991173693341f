"""Claude Code's `can_use_tool` requests, and the answers that go back.

What flows in: the body of a `control_request` with subtype
`can_use_tool` (`tool_name`, `input`, `tool_use_id`,
`permission_suggestions`, `decision_reason`...). What flows out: a corral
`Request` (a `Permission`, or a `Question` for `AskUserQuestion`) plus an
`AskedTool` that remembers what is needed to answer it; later, the
`control_response` payload for the app's answer.

Answers on the wire (the Claude Agent SDK's `PermissionResult`):
- allow: `{behavior: "allow", updatedInput: <the input>}`; AllowAlways adds
  `updatedPermissions` (the CLI's own rule suggestions, minus any that
  would change the permission mode: corral keeps the CLI in its most asking
  mode so every decision passes through corral);
- deny: `{behavior: "deny", message}`: the model reads the message and
  goes on;
- a question is answered by allowing the tool with
  `updatedInput = input + {answers: {question text: chosen label(s)}}`.

The request id corral shows the app is the CLI's own `request_id`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.events import (
    Answer,
    Choice,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    QuestionsAnswer,
    Request,
    TextAnswer,
    ToolStatus,
    ToolUpdate,
)
from ._tools import started_tool

__all__ = ["QUESTION_TOOL", "AskedTool", "answer_payload", "read_can_use_tool", "withdraw_payload"]

QUESTION_TOOL = "AskUserQuestion"
DENY_MESSAGE = "The user denied this tool use."
WITHDRAWN_MESSAGE = "The request was withdrawn before anyone answered it."
# Suggestion types that only add rules or directories; `setMode` would
# switch the CLI out of its asking mode behind corral's back.
_ALWAYS_TYPES = frozenset({"addRules", "addDirectories"})


@attrs.frozen(kw_only=True)
class AskedTool:
    """What answering one `can_use_tool` needs."""

    request_id: str
    tool_name: str
    input: dict[str, Any]
    always: tuple[dict[str, Any], ...] = ()
    # For AskUserQuestion: each question's text and its choices' labels by id.
    questions: tuple[tuple[str, Mapping[str, str]], ...] = ()


def _question(index: int, raw: object) -> tuple[Question, tuple[str, Mapping[str, str]]] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        return None
    labels: dict[str, str] = {}
    choices: list[Choice] = []
    for option in raw.get("options") or []:
        if not isinstance(option, dict) or not isinstance(option.get("label"), str):
            continue
        label = option["label"]
        choice_id = label if label not in labels else f"{label}#{len(choices) + 1}"
        labels[choice_id] = label
        description = option.get("description")
        choices.append(
            Choice(
                id=choice_id,
                label=label,
                description=description if isinstance(description, str) else None,
            )
        )
    header = raw.get("header")
    question = Question(
        id=f"q{index + 1}",
        text=raw["question"],
        header=header if isinstance(header, str) else None,
        choices=tuple(choices),
        multi_select=bool(raw.get("multiSelect")),
        # Claude Code's own dialog always offers "Other" with free text.
        allows_free_text=True,
    )
    return question, (raw["question"], labels)


def _question_request(request_id: str, tool_input: dict[str, Any]) -> tuple[Request, AskedTool]:
    questions: list[Question] = []
    keys: list[tuple[str, Mapping[str, str]]] = []
    for index, raw in enumerate(tool_input.get("questions") or []):
        read = _question(index, raw)
        if read is not None:
            questions.append(read[0])
            keys.append(read[1])
    asked = AskedTool(
        request_id=request_id, tool_name=QUESTION_TOOL, input=tool_input, questions=tuple(keys)
    )
    return QuestionRequest(id=request_id, questions=tuple(questions)), asked


def read_can_use_tool(
    request_id: str, body: Mapping[str, Any], known: ToolUpdate | None
) -> tuple[Request, AskedTool]:
    """A corral request for one `can_use_tool`; `known` is the tool as already shown."""
    name = str(body.get("tool_name") or "unknown")
    raw_input = body.get("input")
    tool_input: dict[str, Any] = dict(raw_input) if isinstance(raw_input, dict) else {}
    if name == QUESTION_TOOL and tool_input.get("questions"):
        return _question_request(request_id, tool_input)
    tool_id = body.get("tool_use_id") if isinstance(body.get("tool_use_id"), str) else request_id
    tool = known or started_tool(str(tool_id), name, tool_input, ToolStatus.PENDING)
    suggestions = body.get("permission_suggestions")
    always = tuple(
        s
        for s in (suggestions if isinstance(suggestions, list) else [])
        if isinstance(s, dict) and s.get("type") in _ALWAYS_TYPES
    )
    options = [PermissionChoice.ALLOW_ONCE]
    if always:
        options.append(PermissionChoice.ALLOW_ALWAYS)
    options.append(PermissionChoice.DENY_ONCE)
    detail = next(
        (
            body[key]
            for key in ("decision_reason", "description", "blocked_path")
            if isinstance(body.get(key), str) and body[key]
        ),
        None,
    )
    request = PermissionRequest(id=request_id, tool=tool, options=tuple(options), detail=detail)
    asked = AskedTool(request_id=request_id, tool_name=name, input=tool_input, always=always)
    return request, asked


def _answers(asked: AskedTool, answer: QuestionsAnswer) -> dict[str, str]:
    answers: dict[str, str] = {}
    for (text, labels), given in zip(asked.questions, answer.answers, strict=False):
        match given:
            case ChoicesAnswer(choices=chosen):
                answers[text] = ", ".join(labels.get(choice, choice) for choice in chosen)
            case TextAnswer(text=free):
                answers[text] = free
    return answers


def answer_payload(asked: AskedTool, answer: Answer, message: str | None) -> dict[str, Any]:
    """The `control_response` payload answering `asked` with `answer`."""
    match answer:
        case QuestionsAnswer():
            return {
                "behavior": "allow",
                "updatedInput": {**asked.input, "answers": _answers(asked, answer)},
            }
        case PermissionAnswer(choice=choice) if choice.allows:
            payload: dict[str, Any] = {"behavior": "allow", "updatedInput": asked.input}
            if choice is PermissionChoice.ALLOW_ALWAYS and asked.always:
                payload["updatedPermissions"] = list(asked.always)
            return payload
    return {"behavior": "deny", "message": message or DENY_MESSAGE}


def withdraw_payload(message: str | None = None) -> dict[str, Any]:
    """Nobody will answer: deny, so the CLI never waits on it."""
    return {"behavior": "deny", "message": message or WITHDRAWN_MESSAGE}
