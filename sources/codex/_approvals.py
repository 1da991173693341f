"""Codex's server→client requests: what it asks, and how corral answers.

In: a JSON-RPC request from `codex app-server` (its id, method, params)
and the tool it concerns, as the app already saw it. Out: a `RequestAsked`
for the engine, and later the wire reply (`Reply`) for the engine's
answer or withdrawal. Requests corral cannot represent get a JSON-RPC error
reply at once (Codex must never wait forever) and an Info diagnostic.

- item/commandExecution/requestApproval → Permission: allow = accept,
  acceptForSession or the offered execpolicy amendment; deny = decline;
  withdraw = cancel;
- item/fileChange/requestApproval → Permission: accept / acceptForSession,
  decline, cancel;
- item/permissions/requestApproval → Permission: allow grants the requested
  profile for the turn or the session; deny and withdraw grant nothing;
- item/tool/requestUserInput → Question: answers by question id (choice
  labels or the free text); withdraw = no answers;
- execCommandApproval, applyPatchApproval (protocol v1) → Permission:
  approved, approved_for_session, denied{rejection}; withdraw = abort.

Codex 0.171 lists `availableDecisions` without "decline" for commands, yet
honours it (the model is told the user rejected the call and goes on), so
DenyOnce is always offered. Request ids are `codex-<JSON-RPC id>`: unique
for the process, which is the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ...pipeline.driver import RequestAsked
from ...pipeline.events import (
    Answer,
    Choice,
    ChoicesAnswer,
    CommandInput,
    Fields,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    QuestionsAnswer,
    RawTool,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from ._common import file_diff
from ._items import edit_title

__all__ = ["APPROVAL_METHODS", "Reply", "ServerRequests", "unsupported_reply"]

ALLOW_ONCE = PermissionChoice.ALLOW_ONCE
ALLOW_ALWAYS = PermissionChoice.ALLOW_ALWAYS
DENY_ONCE = PermissionChoice.DENY_ONCE


@attrs.frozen
class Reply:
    """One JSON-RPC reply to send: a result, or an error (code, message)."""

    rpc_id: int | str
    result: Any = None
    error: tuple[int, str] | None = None


@attrs.frozen(kw_only=True)
class _Open:
    rpc_id: int | str
    method: str
    # What to send for each offered choice (None: computed from the answer).
    decisions: dict[PermissionChoice, Any] = attrs.field(factory=dict)
    withdraw: Any = None
    question_ids: tuple[str, ...] = ()


def _command_decisions(params: Fields) -> dict[PermissionChoice, Any]:
    offered = params.raw.get("availableDecisions")
    if not isinstance(offered, list):
        offered = ["accept", "acceptForSession", "decline"]
    decisions: dict[PermissionChoice, Any] = {}
    for decision in offered:
        if decision == "accept":
            decisions[ALLOW_ONCE] = "accept"
        elif decision == "acceptForSession":
            decisions[ALLOW_ALWAYS] = "acceptForSession"
        elif isinstance(decision, dict) and "acceptWithExecpolicyAmendment" in decision:
            decisions.setdefault(ALLOW_ALWAYS, decision)
    decisions[DENY_ONCE] = "decline"
    return decisions


class ServerRequests:
    """The requests Codex is waiting on, keyed by corral request id."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}

    def __len__(self) -> int:
        return len(self._open)

    @staticmethod
    def request_id(rpc_id: int | str) -> str:
        return f"codex-{rpc_id}"

    def open(
        self, rpc_id: int | str, method: str, params: Fields, tool: ToolUpdate | None
    ) -> RequestAsked | None:
        """The request for the engine; None when corral cannot represent it."""
        request_id = self.request_id(rpc_id)
        if method == "item/tool/requestUserInput":
            return self._questions(request_id, rpc_id, method, params)
        read = _PERMISSIONS.get(method)
        if read is None:
            return None
        asked = read(params)
        entry = _Open(
            rpc_id=rpc_id, method=method, decisions=asked.decisions, withdraw=asked.withdraw
        )
        shown = tool if asked.stand_in and tool is not None else asked.tool
        self._open[request_id] = entry
        order = (ALLOW_ONCE, ALLOW_ALWAYS, DENY_ONCE)
        request = PermissionRequest(
            id=request_id,
            tool=shown,
            options=tuple(choice for choice in order if choice in entry.decisions),
            detail=asked.detail,
        )
        return RequestAsked(request=request, extensions={"codex/method": method})

    def _questions(
        self, request_id: str, rpc_id: int | str, method: str, params: Fields
    ) -> RequestAsked:
        questions = []
        for path, raw in params.array("questions"):
            question = Fields(raw, path)
            choices = []
            for option_path, option in question.array("options", True):
                fields = Fields(option, option_path)
                label = fields.string("label")
                choices.append(
                    Choice(id=label, label=label, description=fields.opt_string("description"))
                )
            questions.append(
                Question(
                    id=question.string("id"),
                    text=question.string("question"),
                    header=question.opt_string("header"),
                    choices=tuple(choices),
                    allows_free_text=question.flag("isOther", False) or not choices,
                )
            )
        self._open[request_id] = _Open(
            rpc_id=rpc_id,
            method=method,
            withdraw={"answers": {}},
            question_ids=tuple(q.id for q in questions),
        )
        return RequestAsked(
            request=QuestionRequest(id=request_id, questions=tuple(questions)),
            extensions={"codex/method": method},
        )

    # ---- answers -------------------------------------------------------------

    def answer(self, request_id: str, answer: Answer, message: str | None) -> Reply | None:
        """The reply for the engine's (validated) answer; None if no longer open."""
        entry = self._open.pop(request_id, None)
        if entry is None:
            return None
        if isinstance(answer, QuestionsAnswer):
            answers = {}
            for question_id, given in zip(entry.question_ids, answer.answers, strict=False):
                values = list(given.choices) if isinstance(given, ChoicesAnswer) else [given.text]
                answers[question_id] = {"answers": values}
            return Reply(entry.rpc_id, {"answers": answers})
        assert isinstance(answer, PermissionAnswer)
        choice = answer.choice
        if choice not in entry.decisions:  # DenyAlways is never offered; the engine checks
            choice = DENY_ONCE if not choice.allows else ALLOW_ONCE
        decision = entry.decisions.get(choice)
        if entry.method == "item/permissions/requestApproval":
            return Reply(entry.rpc_id, decision)
        if decision is None:  # legacy deny carries the reason
            decision = {"denied": {"rejection": message or "denied by the user"}}
        return Reply(entry.rpc_id, {"decision": decision})

    def withdraw(self, request_id: str) -> Reply | None:
        entry = self._open.pop(request_id, None)
        return None if entry is None else Reply(entry.rpc_id, entry.withdraw)

    def withdraw_all(self) -> list[Reply]:
        return [reply for rid in list(self._open) if (reply := self.withdraw(rid)) is not None]

    def resolved(self, rpc_id: object) -> str | None:
        """Codex settled a request itself; the corral id if it was still open."""
        if not isinstance(rpc_id, int | str):
            return None
        request_id = self.request_id(rpc_id)
        return request_id if self._open.pop(request_id, None) is not None else None


@attrs.frozen(kw_only=True)
class _Asked:
    """What one approval request asks, read from its params."""

    tool: ToolUpdate  # a stand-in: Codex's own tool for the item is shown when known
    decisions: dict[PermissionChoice, Any]  # what to send for each offered choice
    withdraw: Any
    detail: str | None
    stand_in: bool = True  # False: `tool` is shown even when the item's tool is known


def _command(params: Fields) -> _Asked:
    item_id = params.string("itemId")
    command = params.opt_string("command") or ""
    tool = ToolUpdate(
        id=item_id,
        kind=ToolKind.EXECUTE,
        title=command or "Run a command",
        status=ToolStatus.PENDING,
        input=CommandInput(command=command, cwd=params.opt_string("cwd")),
    )
    detail = params.opt_string("reason")
    network = params.opt_obj("networkApprovalContext")
    if network is not None:
        access = f"network access to {network.opt_string('host')}"
        detail = f"{detail} ({access})" if detail else access
    decisions = _command_decisions(params)
    return _Asked(tool=tool, decisions=decisions, withdraw={"decision": "cancel"}, detail=detail)


def _file_change(params: Fields) -> _Asked:
    tool = ToolUpdate(
        id=params.string("itemId"),
        kind=ToolKind.EDIT,
        title="Edit files",
        status=ToolStatus.PENDING,
    )
    detail = params.opt_string("reason")
    root = params.opt_string("grantRoot")
    if root:
        detail = f"{detail} (write access under {root})" if detail else f"write under {root}"
    decisions = {ALLOW_ONCE: "accept", ALLOW_ALWAYS: "acceptForSession", DENY_ONCE: "decline"}
    return _Asked(tool=tool, decisions=decisions, withdraw={"decision": "cancel"}, detail=detail)


def _permissions(params: Fields) -> _Asked:
    requested = params.raw.get("permissions")
    tool = ToolUpdate(
        id=params.string("itemId"),
        kind=ToolKind.OTHER,
        title="Grant additional permissions",
        status=ToolStatus.PENDING,
        raw=RawTool(name="permissions", input=requested),
    )
    decisions = {
        ALLOW_ONCE: {"permissions": requested, "scope": "turn"},
        ALLOW_ALWAYS: {"permissions": requested, "scope": "session"},
        DENY_ONCE: {"permissions": {}},
    }
    withdraw: dict[str, Any] = {"permissions": {}}
    detail = params.opt_string("reason")
    return _Asked(tool=tool, decisions=decisions, withdraw=withdraw, detail=detail, stand_in=False)


def _legacy(tool: ToolUpdate, params: Fields) -> _Asked:
    decisions = {
        ALLOW_ONCE: "approved",
        ALLOW_ALWAYS: "approved_for_session",
        DENY_ONCE: None,  # {"denied": {"rejection": message}}
    }
    detail = params.opt_string("reason")
    return _Asked(tool=tool, decisions=decisions, withdraw={"decision": "abort"}, detail=detail)


def _legacy_command(params: Fields) -> _Asked:
    command = " ".join(params.strings("command"))
    tool = ToolUpdate(
        id=params.string("callId"),
        kind=ToolKind.EXECUTE,
        title=command,
        status=ToolStatus.PENDING,
        input=CommandInput(command=command, cwd=params.opt_string("cwd")),
    )
    return _legacy(tool, params)


def _legacy_patch(params: Fields) -> _Asked:
    diffs = []
    for path, raw in params.obj("fileChanges").raw.items():
        change = Fields(raw, f"fileChanges.{path}")
        change_type = change.string("type")
        text = change.opt_string("unified_diff") or change.opt_string("content") or ""
        diffs.append(file_diff(path, change_type, text))
    paths = [d.path for d in diffs]
    tool = ToolUpdate(
        id=params.string("callId"),
        kind=ToolKind.EDIT,
        title=edit_title(ToolKind.EDIT, paths),
        status=ToolStatus.PENDING,
        diffs=tuple(diffs),
        locations=tuple(paths),
    )
    return _legacy(tool, params)


# The approval requests by method (the questions of `item/tool/requestUserInput` aside).
_PERMISSIONS: dict[str, Callable[[Fields], _Asked]] = {
    "item/commandExecution/requestApproval": _command,
    "item/fileChange/requestApproval": _file_change,
    "item/permissions/requestApproval": _permissions,
    "execCommandApproval": _legacy_command,
    "applyPatchApproval": _legacy_patch,
}


def unsupported_reply(rpc_id: int | str, method: str) -> Reply:
    return Reply(rpc_id, error=(-32601, f"corral does not support {method}"))


APPROVAL_METHODS = frozenset(
    {
        "item/commandExecution/requestApproval",
        "item/fileChange/requestApproval",
        "item/permissions/requestApproval",
        "item/tool/requestUserInput",
        "execCommandApproval",
        "applyPatchApproval",
    }
)
