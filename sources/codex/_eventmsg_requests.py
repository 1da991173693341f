"""Codex `EventMsg` requests → `RequestAsked` (sans-IO).

Part of `EventMsgNormalizer`: exec_approval_request and
apply_patch_approval_request become Permission requests (AllowOnce,
AllowAlways, DenyOnce; the tool as the app saw it when it did),
request_user_input and elicitation_request become Question requests
(choices are the options' labels; an elicitation takes free text). These
come from transcripts, so nothing here answers them.
"""

from __future__ import annotations

from ...pipeline.driver import DriverEvent, RequestAsked
from ...pipeline.events import (
    Choice,
    Fields,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    ToolStatus,
    ToolUpdate,
)
from ._eventmsg_tools import ToolBook, exec_tool, patch_tool

__all__ = ["elicitation", "exec_approval", "patch_approval", "user_input"]

_PERMISSION_OPTIONS = (
    PermissionChoice.ALLOW_ONCE,
    PermissionChoice.ALLOW_ALWAYS,
    PermissionChoice.DENY_ONCE,
)


def exec_approval(tools: ToolBook, payload: Fields) -> list[DriverEvent]:
    call_id = payload.string("call_id")
    tool = tools.known(call_id, exec_tool(payload, ToolStatus.PENDING))
    return _permission(f"exec-{call_id}", tool, payload)


def patch_approval(payload: Fields) -> list[DriverEvent]:
    call_id = payload.string("call_id")
    return _permission(f"patch-{call_id}", patch_tool(payload, ToolStatus.PENDING), payload)


def _permission(request_id: str, tool: ToolUpdate, payload: Fields) -> list[DriverEvent]:
    request = PermissionRequest(
        id=request_id,
        tool=tool,
        options=_PERMISSION_OPTIONS,
        detail=payload.opt_string("reason"),
    )
    return [RequestAsked(request=request)]


def user_input(payload: Fields) -> list[DriverEvent]:
    questions = []
    for path, raw in payload.array("questions"):
        question = Fields(raw, path)
        choices = tuple(
            Choice(
                id=Fields(o, p).string("label"),
                label=Fields(o, p).string("label"),
                description=Fields(o, p).opt_string("description"),
            )
            for p, o in question.array("options", True)
        )
        questions.append(
            Question(
                id=question.string("id"),
                text=question.string("question"),
                header=question.opt_string("header"),
                choices=choices,
                allows_free_text=question.flag("isOther", False) or not choices,
            )
        )
    request = QuestionRequest(
        id=f"question-{payload.string('call_id')}", questions=tuple(questions)
    )
    return [RequestAsked(request=request)]


def elicitation(payload: Fields) -> list[DriverEvent]:
    server = payload.string("server_name")
    question = Question(
        id="response",
        text=f"{server}: {payload.string('message')}",
        allows_free_text=True,
    )
    request = QuestionRequest(
        id=f"elicitation-{server}-{payload.value('id')}", questions=(question,)
    )
    return [RequestAsked(request=request)]
