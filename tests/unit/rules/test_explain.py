"""Explanations and the `corral policy` commands (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corral.actors.policy_cli import main
from corral.pipeline.commands import PermissionMode
from corral.pipeline.policy import ModePolicy
from corral.pipeline.rules import explain, explain_question

from .support import policy

RULES = """
[[rule]]
id = "git-read"
command = ["git status", "git diff"]
action = "allow"

[[rule]]
id = "no-push"
command = "git push"
action = "deny"
message = "ask a human"

[[rule]]
id = "ci"
request = "question"
question = "Proceed"
choice = "first"
action = "answer"
"""


def test_an_explanation_names_the_deciding_rule_and_the_rules_passed_over(home: Path) -> None:
    explanation = explain(policy(RULES, str(home)), "Execute", command="git push --force")
    assert explanation.decided_by == "rule:no-push"
    assert explanation.outcome == "deny_once"
    (trace,) = explanation.subjects
    assert trace.skipped == (
        ("git-read", "'git push --force' does not match prefix 'git status' or prefix 'git diff'"),
    )
    text = explanation.render()
    assert "passed over git-read" in text
    assert "deny_once by rule:no-push" in text and "ask a human" in text


def test_an_explanation_of_a_compound_line_has_one_trace_per_command(home: Path) -> None:
    explanation = explain(policy(RULES, str(home)), "Execute", command="git status && make")
    assert [(t.subject, t.decided_by) for t in explanation.subjects] == [
        ("command 'git status'", "rule:git-read"),
        ("command 'make'", "mode:Ask"),
    ]
    assert explanation.outcome == "ask" and explanation.decided_by == "mode:Ask"


def test_an_explanation_has_a_json_form(home: Path) -> None:
    wire = explain(policy(RULES, str(home)), "Execute", command="git diff").to_wire()
    assert wire["decided_by"] == "rule:git-read"
    assert wire["answer"] == {"Permission": "AllowOnce"}
    json.dumps(wire)


def test_explaining_a_question(home: Path) -> None:
    explanation = explain_question(policy(RULES, str(home)), "Proceed?", choices=["yes", "no"])
    assert explanation.outcome == "answered" and explanation.decided_by == "rule:ci"
    assert "choose yes" in explanation.render()


def test_any_policy_can_be_explained_without_a_trace() -> None:
    explanation = explain(ModePolicy(), "Edit", path="a.py", mode=PermissionMode.ACCEPT_EDITS)
    assert explanation.decided_by == "mode:AcceptEdits"


def test_an_unknown_tool_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool kind 'Shell'"):
        explain(ModePolicy(), "Shell")


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(RULES)
    return path


def test_check_accepts_a_good_file(policy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "check", str(policy_file)]) == 0
    assert "ok: 3 rules" in capsys.readouterr().out


def test_check_lists_problems_with_line_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nid = "a"\naction = "allow"\ntool = "Shell"\n')
    assert main(["policy", "check", str(bad)]) == 1
    assert f"{bad}:4: unknown tool kind 'Shell'" in capsys.readouterr().err


def test_check_reads_presets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "check", "preset:AutoApprove", "preset:Ask"]) == 0
    assert "unmatched: AutoApprove mode" in capsys.readouterr().out


def test_explain_says_which_rule_decides(
    policy_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["policy", "explain", str(policy_file), "--tool", "execute", "--command", "git push"]
    )
    assert code == 0
    assert "=> deny_once by rule:no-push" in capsys.readouterr().out


def test_explain_as_json(policy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["policy", "explain", str(policy_file), "--mcp", "github/get_issue", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["request"] == "Mcp from any: github/get_issue"


def test_explain_a_guard(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "policy",
        "explain",
        "preset:AutoApprove",
        "--tool",
        "Read",
        "--path",
        "~/.aws/credentials",
    ]
    assert main(args) == 0
    assert "deny_once by guard:secret-read" in capsys.readouterr().out


def test_explain_needs_a_tool(policy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "explain", str(policy_file), "--command", "ls"]) == 2
    assert "say which tool" in capsys.readouterr().err


def test_preset_prints_the_shipped_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "preset", "AcceptEdits"]) == 0
    assert 'mode = "AcceptEdits"' in capsys.readouterr().out
