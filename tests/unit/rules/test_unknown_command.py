"""The `unknown-command` guard: asked, denied when nobody answers, explained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corral.actors.policy_cli import main
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import Respond
from corral.pipeline.events import PermissionAnswer, PermissionChoice, RequestOpened
from corral.pipeline.policy import Decide, Forward
from corral.pipeline.rules import explain, load_policy

from .harness import Harness
from .support import context, permission, policy

AUTO = PermissionMode.AUTO_APPROVE
INLINE = "python -c 'import os'"


def by(verdict: Decide | Forward) -> str:
    return verdict.decided_by if isinstance(verdict, Decide) else f"ask:{verdict.reason}"


def test_unattended_an_unknown_command_is_denied_at_the_deadline(home: Path, session: Path) -> None:
    text = 'mode = "AutoApprove"\ndeadline = 30\non_timeout = "allow"\n'
    harness = Harness(policy(text, str(home)), session, mode=AUTO)
    harness.start_turn()
    harness.ask(INLINE)
    (opened,) = harness.kinds(RequestOpened)
    assert opened.extensions["corral/forwarded_by"] == "guard:unknown-command"
    assert opened.extensions["corral/deadline_seconds"] == 30
    harness.advance(30)
    deny = PermissionAnswer(PermissionChoice.DENY_ONCE)
    assert [sent.answer for sent in harness.sent if isinstance(sent, Respond)] == [deny]
    decision = harness.one_decision_per_request()["r1"]
    assert (decision.decision, decision.decided_by) == ("timeout", "timeout")


def test_unattended_a_harmless_command_is_still_allowed_at_once(home: Path, session: Path) -> None:
    text = 'mode = "AutoApprove"\ndeadline = 30\non_timeout = "allow"\n'
    harness = Harness(policy(text, str(home)), session, mode=AUTO)
    harness.start_turn()
    harness.ask("pytest -q")
    decision = harness.one_decision_per_request()["r1"]
    assert (decision.decision, decision.decided_by) == ("allow_once", "mode:AutoApprove")


def test_under_ask_only_the_explanation_changes(home: Path, session: Path) -> None:
    rules = load_policy("preset:Ask", home=str(home))
    verdict = rules.decide(permission("Execute", command=INLINE), context(str(session)))
    assert by(verdict) == "ask:mode:Ask"
    explanation = explain(rules, "Execute", command=INLINE, session_dir=str(session))
    (guard,) = explanation.guards
    assert (guard.guard, guard.word, guard.applied) == ("unknown-command", "-c", False)


def test_a_rule_that_allows_the_command_by_name_knows_it(home: Path, session: Path) -> None:
    text = (
        'mode = "AutoApprove"\n[[rule]]\nid = "docker"\ncommand = "docker ps"\naction = "allow"\n'
    )
    rules = policy(text, str(home))
    auto = context(str(session), mode=AUTO)
    assert by(rules.decide(permission("Execute", command="docker ps"), auto)) == "rule:docker"
    mixed = permission("Execute", command=f"docker ps && {INLINE}")
    assert by(rules.decide(mixed, auto)) == "ask:guard:unknown-command"


def test_a_rule_asking_with_an_allowing_default_keeps_it_for_what_it_names(
    home: Path, session: Path
) -> None:
    text = """
    [[rule]]
    id = "docker"
    command = "docker"
    action = "ask"
    deadline = 5
    on_timeout = "allow"
    """
    verdict = policy(text, str(home)).decide(
        permission("Execute", command="docker ps"), context(str(session))
    )
    assert isinstance(verdict, Forward) and verdict.on_timeout is not None


@pytest.mark.parametrize(
    ("setting", "expected"),
    [("deny", "guard:unknown-command"), ("off", "mode:AutoApprove")],
)
def test_the_guard_can_be_set_to_deny_or_off(
    setting: str, expected: str, home: Path, session: Path
) -> None:
    text = f'mode = "AutoApprove"\n[guards]\nunknown-command = "{setting}"\n'
    verdict = policy(text, str(home)).decide(
        permission("Execute", command=INLINE), context(str(session), mode=AUTO)
    )
    assert by(verdict) == expected
    if isinstance(verdict, Decide) and setting == "deny":
        assert verdict.message is not None and "'-c'" in verdict.message


def test_policy_explain_names_the_guard_and_the_word(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["policy", "explain", "preset:AutoApprove", "--tool", "Execute", "--dir", str(session)]
    assert main([*argv, "--command", f"git status && {INLINE}"]) == 0
    out = capsys.readouterr().out
    assert "guard unknown-command applies: python -c import os: python -c runs inline code" in out
    assert "because of '-c'" in out and "=> ask the app (guard:unknown-command)" in out
    assert main([*argv, "--command", "rm -rf $TARGET", "--json"]) == 0
    (guard,) = json.loads(capsys.readouterr().out)["guards"]
    assert (guard["guard"], guard["word"], guard["applied"]) == ("unknown-command", "$TARGET", True)
