"""`generate`'s pieces without an event loop: its policy, its options, Claude with no tools."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from corral.actors._generate import Decline, check_options
from corral.pipeline.commands import PermissionMode, SessionOptions
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Choice,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from corral.pipeline.policy import Decide, Forward, PolicyContext
from corral.sources.claude._catalog import catalog_entry
from corral.sources.claude._launch import launch_for, restart_for

CONTEXT = PolicyContext(agent_id="claude", session_dir="/w", mode=PermissionMode.ASK)
TOOL = ToolUpdate(id="t1", kind=ToolKind.EXECUTE, title="rm -rf /", status=ToolStatus.PENDING)


def permission(*options: PermissionChoice) -> PermissionRequest:
    return PermissionRequest(id="r1", tool=TOOL, options=options)


def test_a_permission_is_denied_once_by_generate() -> None:
    verdict = Decline().decide(
        permission(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE), CONTEXT
    )
    assert isinstance(verdict, Decide)
    assert verdict.answer == PermissionAnswer(PermissionChoice.DENY_ONCE)
    assert verdict.decided_by == "generate" and verdict.message


def test_deny_always_is_the_fallback_and_no_deny_at_all_is_forwarded() -> None:
    always = Decline().decide(
        permission(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ALWAYS), CONTEXT
    )
    assert isinstance(always, Decide)
    assert always.answer == PermissionAnswer(PermissionChoice.DENY_ALWAYS)
    assert isinstance(Decline().decide(permission(PermissionChoice.ALLOW_ONCE), CONTEXT), Forward)


def test_free_text_questions_get_empty_text_and_choice_only_ones_are_forwarded() -> None:
    free = Question(id="q1", text="Why?")
    open_choice = Question(id="q2", text="Which?", choices=(Choice(id="a", label="A"),))
    other = Question(
        id="q3", text="Which?", choices=(Choice(id="a", label="A"),), allows_free_text=True
    )
    verdict = Decline().decide(QuestionRequest(id="r1", questions=(free, other)), CONTEXT)
    assert isinstance(verdict, Decide)
    assert verdict.answer == QuestionsAnswer((TextAnswer(""), TextAnswer("")))
    forwarded = Decline().decide(QuestionRequest(id="r2", questions=(free, open_choice)), CONTEXT)
    assert isinstance(forwarded, Forward)


@pytest.mark.parametrize(
    "fields",
    [
        {"resume": "tok"},
        {"fork": "tok"},
        {"fork_at": "m1"},
        {"policy": "p.toml"},
        {"permission_mode": PermissionMode.AUTO_APPROVE},
        {"permission_mode": PermissionMode.ACCEPT_EDITS},
    ],
)
def test_options_that_continue_or_allow_are_invalid_configuration(
    fields: dict[str, object],
) -> None:
    with pytest.raises(CorralError) as refused:
        check_options(SessionOptions(agent="claude", dir="/w", **fields))  # type: ignore[arg-type]
    assert refused.value.kind is ErrorKind.INVALID_CONFIGURATION


def test_the_session_always_asks() -> None:
    spec = check_options(SessionOptions(agent="claude", dir="/w", show_auto_decisions=True))
    assert spec.permission_mode is PermissionMode.ASK


def ids() -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield f"00000000-0000-4000-8000-{n:012d}"


def claude(**fields: object) -> tuple[LaunchSpec, tuple[str, ...]]:
    spec = LaunchSpec(session_id="s1", executable="/bin/claude", dir="/w", **fields)  # type: ignore[arg-type]
    minted = ids()
    return spec, launch_for("/bin/claude", spec, {}, lambda: next(minted)).argv


def test_claude_without_tools_gets_an_empty_tools_list() -> None:
    _, default = claude()
    assert "--tools" not in default
    spec, argv = claude(tools=False)
    at = argv.index("--tools")
    assert argv[at + 1] == ""
    minted = ids()
    first = launch_for("/bin/claude", spec, {}, lambda: next(minted))
    again = restart_for(first, spec, first.session_id, first.model, first.mode)
    assert again.argv[again.argv.index("--tools") + 1] == ""  # a restart keeps them off
    assert catalog_entry(environ={}).disables_tools


def test_claude_without_tools_refuses_args_that_bring_them_back() -> None:
    with pytest.raises(CorralError) as refused:
        claude(tools=False, args=("--tools", "Bash"))
    assert refused.value.kind is ErrorKind.INVALID_CONFIGURATION
    _, argv = claude(args=("--tools=Read",))  # an ordinary session may choose its tools
    assert argv[-1] == "--tools=Read"
