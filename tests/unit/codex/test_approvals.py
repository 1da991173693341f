"""What corral offers for each Codex request, and what it sends back."""

from __future__ import annotations

from typing import Any

from corral.pipeline.events import (
    ChoicesAnswer,
    Fields,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
)
from corral.sources.codex._approvals import Reply, ServerRequests

from tests.support.schema import check
from tests.unit.codex.golden import as_event

ALLOW_ONCE = PermissionChoice.ALLOW_ONCE
ALLOW_ALWAYS = PermissionChoice.ALLOW_ALWAYS
DENY_ONCE = PermissionChoice.DENY_ONCE


def _open(requests: ServerRequests, method: str, params: dict[str, Any], rpc_id: int = 0) -> Any:
    asked = requests.open(rpc_id, method, Fields(params, method), None)
    assert asked is not None
    from corral.pipeline.events import RequestOpened

    check("line-protocol.schema.json", "Event", as_event(RequestOpened(asked.request)))
    return asked.request


COMMAND = {
    "threadId": "t",
    "turnId": "u",
    "itemId": "call-1",
    "startedAtMs": 1,
    "command": "/bin/bash -lc 'touch x'",
    "cwd": "/w",
    "availableDecisions": [
        "accept",
        {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "x"]}},
        "cancel",
    ],
}


def test_command_approval_offers_once_always_and_deny() -> None:
    request = _open(ServerRequests(), "item/commandExecution/requestApproval", COMMAND)
    assert isinstance(request, PermissionRequest)
    assert request.options == (ALLOW_ONCE, ALLOW_ALWAYS, DENY_ONCE)
    assert request.tool.id == "call-1"


def test_command_answers() -> None:
    amendment = {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch", "x"]}}
    for choice, decision in [
        (ALLOW_ONCE, "accept"),
        (ALLOW_ALWAYS, amendment),
        (DENY_ONCE, "decline"),
    ]:
        requests = ServerRequests()
        _open(requests, "item/commandExecution/requestApproval", COMMAND, rpc_id=7)
        reply = requests.answer("codex-7", PermissionAnswer(choice), None)
        assert reply == Reply(7, {"decision": decision})


def test_accept_for_session_is_preferred_for_always_when_offered() -> None:
    requests = ServerRequests()
    params = {**COMMAND, "availableDecisions": ["accept", "acceptForSession", "decline"]}
    _open(requests, "item/commandExecution/requestApproval", params)
    reply = requests.answer("codex-0", PermissionAnswer(ALLOW_ALWAYS), None)
    assert reply == Reply(0, {"decision": "acceptForSession"})


def test_withdrawing_an_approval_cancels_it_once() -> None:
    requests = ServerRequests()
    _open(requests, "item/commandExecution/requestApproval", COMMAND)
    assert requests.withdraw("codex-0") == Reply(0, {"decision": "cancel"})
    assert requests.withdraw("codex-0") is None
    assert requests.answer("codex-0", PermissionAnswer(ALLOW_ONCE), None) is None


def test_withdraw_all_answers_every_open_request() -> None:
    requests = ServerRequests()
    _open(requests, "item/commandExecution/requestApproval", COMMAND, rpc_id=1)
    _open(requests, "item/fileChange/requestApproval", {"itemId": "p", "startedAtMs": 1}, rpc_id=2)
    assert [r.rpc_id for r in requests.withdraw_all()] == [1, 2]
    assert len(requests) == 0


def test_file_change_approval() -> None:
    requests = ServerRequests()
    params = {"itemId": "p", "startedAtMs": 1, "reason": "needs it", "grantRoot": "/w"}
    request = _open(requests, "item/fileChange/requestApproval", params)
    assert request.options == (ALLOW_ONCE, ALLOW_ALWAYS, DENY_ONCE)
    assert request.detail == "needs it (write access under /w)"
    assert requests.answer("codex-0", PermissionAnswer(ALLOW_ALWAYS), None) == Reply(
        0, {"decision": "acceptForSession"}
    )


def test_permissions_request_grants_the_profile_for_the_turn_or_the_session() -> None:
    wanted = {"network": {"enabled": True}}
    params = {"itemId": "i", "cwd": "/w", "permissions": wanted, "startedAtMs": 1}
    for choice, result in [
        (ALLOW_ONCE, {"permissions": wanted, "scope": "turn"}),
        (ALLOW_ALWAYS, {"permissions": wanted, "scope": "session"}),
        (DENY_ONCE, {"permissions": {}}),
    ]:
        requests = ServerRequests()
        _open(requests, "item/permissions/requestApproval", params)
        assert requests.answer("codex-0", PermissionAnswer(choice), None) == Reply(0, result)


def test_question_choices_are_labels_and_answers_go_by_question_id() -> None:
    requests = ServerRequests()
    params = {
        "itemId": "q",
        "isBlocking": True,
        "questions": [
            {
                "id": "go",
                "header": "Go",
                "question": "Proceed?",
                "isOther": True,
                "options": [
                    {"label": "Yes", "description": "y"},
                    {"label": "No", "description": "n"},
                ],
            },
            {"id": "why", "header": "Why", "question": "Notes?", "options": None},
        ],
    }
    request = _open(requests, "item/tool/requestUserInput", params)
    assert isinstance(request, QuestionRequest)
    first, second = request.questions
    assert [c.id for c in first.choices] == ["Yes", "No"] and first.allows_free_text
    assert second.choices == () and second.allows_free_text
    answer = QuestionsAnswer((ChoicesAnswer(("Yes",)), TextAnswer("because")))
    assert requests.answer("codex-0", answer, None) == Reply(
        0, {"answers": {"go": {"answers": ["Yes"]}, "why": {"answers": ["because"]}}}
    )


def test_withdrawn_question_gets_no_answers() -> None:
    requests = ServerRequests()
    params = {"itemId": "q", "isBlocking": True, "questions": []}
    _open(requests, "item/tool/requestUserInput", params)
    assert requests.withdraw("codex-0") == Reply(0, {"answers": {}})


def test_legacy_exec_approval_denial_carries_the_message() -> None:
    requests = ServerRequests()
    params = {
        "callId": "c",
        "conversationId": "t",
        "command": ["rm", "-rf", "build"],
        "cwd": "/w",
        "parsedCmd": [],
    }
    request = _open(requests, "execCommandApproval", params)
    assert request.tool.title == "rm -rf build"
    reply = requests.answer("codex-0", PermissionAnswer(DENY_ONCE), "not now")
    assert reply == Reply(0, {"decision": {"denied": {"rejection": "not now"}}})


def test_legacy_patch_approval_shows_the_diffs() -> None:
    requests = ServerRequests()
    params = {
        "callId": "c",
        "conversationId": "t",
        "fileChanges": {"/w/a": {"type": "add", "content": "new\n"}},
    }
    request = _open(requests, "applyPatchApproval", params)
    assert [(d.path, d.new_text) for d in request.tool.diffs] == [("/w/a", "new\n")]
    assert requests.answer("codex-0", PermissionAnswer(ALLOW_ONCE), None) == Reply(
        0, {"decision": "approved"}
    )
    assert requests.withdraw("codex-0") is None


def test_resolved_closes_only_open_requests() -> None:
    requests = ServerRequests()
    _open(requests, "item/commandExecution/requestApproval", COMMAND, rpc_id=3)
    assert requests.resolved(3) == "codex-3"
    assert requests.resolved(3) is None
    assert requests.resolved(None) is None
