"""Rule matching, table-driven: each field, order, the mode behind the rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.events import (
    Mcp,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    ToolKind,
)
from corral.pipeline.policy import Decide, Forward, ModePolicy
from corral.pipeline.rules import guarded_modes

from .support import context, permission, policy

ALLOW = PermissionChoice.ALLOW_ONCE
RULES = """
[[rule]]
id = "claude-only"
agent = "claude"
tool = "Think"
action = "allow"

[[rule]]
id = "git-read"
command = ["git status", { glob = "git log *" }, { regex = "^git diff( |$)" }]
action = "allow"

[[rule]]
id = "no-force-push"
command_line = { regex = "push.*--force" }
action = "deny"
message = "never force-push"

[[rule]]
id = "npm"
command = "npm"
action = "ask"
deadline = 10
on_timeout = "deny"

[[rule]]
id = "src"
tool = ["Edit", "Read"]
path = "src/**"
action = "allow"

[[rule]]
id = "no-lock"
path = "*.lock"
action = "deny"

[[rule]]
id = "inside-reads"
tool = "Read"
location = "inside"
action = "allow"

[[rule]]
id = "docs-web"
host = ["docs.python.org", "*.readthedocs.io"]
action = "allow"

[[rule]]
id = "api-web"
url = { regex = "^https://api\\\\.example\\\\.com/v[0-9]+/" }
action = "allow"

[[rule]]
id = "gh-read"
mcp_server = "github"
mcp_tool = "get_*"
action = "allow"

[[rule]]
id = "gh-rest"
mcp_server = "github"
action = "deny"
"""

CASES: list[tuple[str, dict[str, Any], str, str]] = [
    # agent and tool kind
    ("agent matches", {"kind": "Think"}, "allow_once", "rule:claude-only"),
    ("agent differs", {"kind": "Think", "agent": "codex"}, "ask", "mode:Ask"),
    # command: prefix by words, glob, regex
    ("prefix", {"kind": "Execute", "command": "git status -s"}, "allow_once", "rule:git-read"),
    ("prefix is by word", {"kind": "Execute", "command": "git statusx"}, "ask", "mode:Ask"),
    ("glob", {"kind": "Execute", "command": "git log --oneline"}, "allow_once", "rule:git-read"),
    ("regex", {"kind": "Execute", "command": "git diff HEAD"}, "allow_once", "rule:git-read"),
    ("regex anchored", {"kind": "Execute", "command": "git diffx"}, "ask", "mode:Ask"),
    (
        "quotes removed",
        {"kind": "Execute", "command": "'git' \"status\""},
        "allow_once",
        "rule:git-read",
    ),
    # command line, deny with message
    (
        "command line",
        {"kind": "Execute", "command": "git push origin --force"},
        "deny_once",
        "rule:no-force-push",
    ),
    # ask
    ("ask", {"kind": "Execute", "command": "npm install"}, "ask", "rule:npm"),
    # compound lines: the strictest command decides
    (
        "every command allowed",
        {"kind": "Execute", "command": "git status && git diff"},
        "allow_once",
        "rule:git-read",
    ),
    (
        "one command unknown",
        {"kind": "Execute", "command": "git status && make"},
        "ask",
        "mode:Ask",
    ),
    (
        "one command denied",
        {"kind": "Execute", "command": "git status; git push --force"},
        "deny_once",
        "rule:no-force-push",
    ),
    ("ask beats allow", {"kind": "Execute", "command": "git status | npm x"}, "ask", "rule:npm"),
    (
        "substitution counts",
        {"kind": "Execute", "command": "git status $(npm x)"},
        "ask",
        "rule:npm",
    ),
    # paths
    ("path glob", {"kind": "Edit", "path": "src/a/b.py"}, "allow_once", "rule:src"),
    ("path outside glob", {"kind": "Edit", "path": "lib/b.py"}, "ask", "mode:Ask"),
    (
        "absolute path inside",
        {"kind": "Edit", "path": "{session}/src/x.py"},
        "allow_once",
        "rule:src",
    ),
    (
        "name glob at any depth",
        {"kind": "Delete", "path": "deep/er/poetry.lock"},
        "deny_once",
        "rule:no-lock",
    ),
    (
        "every path must be allowed",
        {"kind": "Edit", "path": "src/a.py", "diffs": ["src/a.py", "poetry.lock"]},
        "deny_once",
        "rule:no-lock",
    ),
    ("location inside", {"kind": "Read", "path": "README.md"}, "allow_once", "rule:inside-reads"),
    ("location outside", {"kind": "Read", "path": "/etc/hosts"}, "ask", "mode:Ask"),
    ("path rule needs a path", {"kind": "Read"}, "ask", "mode:Ask"),
    # URLs
    ("host", {"kind": "Fetch", "url": "https://docs.python.org/3/"}, "allow_once", "rule:docs-web"),
    (
        "host glob",
        {"kind": "Fetch", "url": "https://attrs.readthedocs.io/x"},
        "allow_once",
        "rule:docs-web",
    ),
    (
        "host is the real host",
        {"kind": "Fetch", "url": "https://docs.python.org@evil.com/"},
        "ask",
        "mode:Ask",
    ),
    (
        "host without scheme",
        {"kind": "Fetch", "url": "DOCS.python.org/3"},
        "allow_once",
        "rule:docs-web",
    ),
    (
        "url regex",
        {"kind": "Fetch", "url": "https://api.example.com/v2/items"},
        "allow_once",
        "rule:api-web",
    ),
    # MCP
    ("mcp tool", {"kind": Mcp(server="github", tool="get_issue")}, "allow_once", "rule:gh-read"),
    (
        "mcp first match wins",
        {"kind": Mcp(server="github", tool="delete_repo")},
        "deny_once",
        "rule:gh-rest",
    ),
    ("other mcp server", {"kind": Mcp(server="slack", tool="get_x")}, "ask", "mode:Ask"),
]


def outcome(verdict: Decide | Forward) -> str:
    if isinstance(verdict, Forward):
        return "ask"
    assert isinstance(verdict.answer, PermissionAnswer)
    return {
        ALLOW: "allow_once",
        PermissionChoice.ALLOW_ALWAYS: "allow_always",
        PermissionChoice.DENY_ONCE: "deny_once",
        PermissionChoice.DENY_ALWAYS: "deny_always",
    }[verdict.answer.choice]


def decided_by(verdict: Decide | Forward) -> str:
    return verdict.decided_by if isinstance(verdict, Decide) else str(verdict.reason)


@pytest.mark.parametrize(("case", "fields", "expected", "by"), CASES, ids=[c[0] for c in CASES])
def test_rules_match_on_each_field(
    case: str, fields: dict[str, Any], expected: str, by: str, home: Path, session: Path
) -> None:
    fields = dict(fields)
    agent = fields.pop("agent", "claude")
    if "path" in fields:
        fields["path"] = fields["path"].format(session=session)
    verdict = policy(RULES, str(home)).decide(
        permission(**fields), context(str(session), agent=agent)
    )
    assert (outcome(verdict), decided_by(verdict)) == (expected, by)


def test_first_match_wins(home: Path, session: Path) -> None:
    text = """
    [[rule]]
    id = "first"
    tool = "Execute"
    action = "deny"

    [[rule]]
    id = "second"
    command = "ls"
    action = "allow"
    """
    verdict = policy(text, str(home)).decide(
        permission("Execute", command="ls"), context(str(session))
    )
    assert decided_by(verdict) == "rule:first"


def test_a_deny_carries_the_rules_message_for_the_agent(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        permission("Execute", command="git push --force"), context(str(session))
    )
    assert isinstance(verdict, Decide) and verdict.message == "never force-push"


def test_a_deny_without_message_says_which_rule(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        permission("Delete", path="a.lock"), context(str(session))
    )
    assert (
        isinstance(verdict, Decide)
        and verdict.message == "denied by corral's policy (rule no-lock)"
    )


def test_an_ask_carries_its_deadline_and_default(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        permission("Execute", command="npm test"), context(str(session))
    )
    assert isinstance(verdict, Forward)
    assert verdict.deadline_seconds == 10
    assert verdict.on_timeout is not None
    assert verdict.on_timeout.answer == PermissionAnswer(PermissionChoice.DENY_ONCE)


def test_policy_deadline_applies_to_every_forward(home: Path, session: Path) -> None:
    verdict = policy('deadline = 7\non_timeout = "allow"\n', str(home)).decide(
        permission("Execute", command="make"), context(str(session))
    )
    assert isinstance(verdict, Forward) and verdict.deadline_seconds == 7
    assert verdict.reason == "mode:Ask"
    assert verdict.on_timeout is not None and verdict.on_timeout.answer == PermissionAnswer(ALLOW)


ALWAYS = """
[[rule]]
id = "ls"
command = "ls"
action = "allow"
always = true

[[rule]]
id = "rm"
command = "rm"
action = "deny"
always = true
"""


@pytest.mark.parametrize(
    ("command", "offered", "expected"),
    [
        ("ls", list(PermissionChoice), PermissionChoice.ALLOW_ALWAYS),
        ("ls", [ALLOW, PermissionChoice.DENY_ONCE], ALLOW),
        ("rm x", list(PermissionChoice), PermissionChoice.DENY_ALWAYS),
        ("rm x", [ALLOW, PermissionChoice.DENY_ONCE], PermissionChoice.DENY_ONCE),
    ],
)
def test_always_is_used_only_when_offered(
    command: str,
    offered: list[PermissionChoice],
    expected: PermissionChoice,
    home: Path,
    session: Path,
) -> None:
    verdict = policy(ALWAYS, str(home)).decide(
        permission("Execute", command=command, options=offered), context(str(session))
    )
    assert isinstance(verdict, Decide) and verdict.answer == PermissionAnswer(expected)


def test_allow_always_needs_every_command_to_say_always(home: Path, session: Path) -> None:
    text = ALWAYS + '\n[[rule]]\nid = "pwd"\ncommand = "pwd"\naction = "allow"\n'
    verdict = policy(text, str(home)).decide(
        permission("Execute", command="ls && pwd"), context(str(session))
    )
    assert isinstance(verdict, Decide) and verdict.answer == PermissionAnswer(ALLOW)


def test_an_allow_the_agent_cannot_take_is_forwarded(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        permission("Execute", command="git status", options=[PermissionChoice.ALLOW_ALWAYS]),
        context(str(session)),
    )
    assert isinstance(verdict, Forward) and verdict.reason == "rule:git-read"


def test_a_deny_the_agent_cannot_take_is_forwarded(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        permission("Delete", path="x.lock", options=[ALLOW]), context(str(session))
    )
    assert isinstance(verdict, Forward) and verdict.reason == "rule:no-lock"


MODE_CASES = [
    (PermissionMode.ASK, "Execute", "ask", "mode:Ask"),
    (PermissionMode.AUTO_APPROVE, "Execute", "allow_once", "mode:AutoApprove"),
    (PermissionMode.ACCEPT_EDITS, "Edit", "allow_once", "mode:AcceptEdits"),
    (PermissionMode.ACCEPT_EDITS, "Execute", "ask", "mode:AcceptEdits"),
]


@pytest.mark.parametrize(("mode", "kind", "expected", "by"), MODE_CASES)
def test_what_no_rule_matches_goes_to_the_sessions_mode(
    mode: PermissionMode, kind: str, expected: str, by: str, home: Path, session: Path
) -> None:
    request = permission(kind, command="make" if kind == "Execute" else None, path="src/a.py")
    verdict = guarded_modes(home=str(home)).decide(request, context(str(session), mode=mode))
    assert (outcome(verdict), decided_by(verdict)) == (expected, by)


@pytest.mark.parametrize(("mode", "kind", "expected", "by"), MODE_CASES)
def test_guarded_modes_agree_with_mode_policy_on_harmless_requests(
    mode: PermissionMode, kind: str, expected: str, by: str, home: Path, session: Path
) -> None:
    request = permission(kind, command="make" if kind == "Execute" else None, path="src/a.py")
    ours = guarded_modes(home=str(home)).decide(request, context(str(session), mode=mode))
    theirs = ModePolicy().decide(request, context(str(session), mode=mode))
    assert outcome(ours) == outcome(theirs)


def test_the_policys_mode_overrides_the_sessions(home: Path, session: Path) -> None:
    verdict = policy('mode = "AutoApprove"\n', str(home)).decide(
        permission("Execute", command="make"), context(str(session), mode=PermissionMode.ASK)
    )
    assert (outcome(verdict), decided_by(verdict)) == ("allow_once", "mode:AutoApprove")


def test_the_mode_never_allows_without_allow_once(home: Path, session: Path) -> None:
    request: PermissionRequest = permission(
        ToolKind.EXECUTE, command="make", options=[PermissionChoice.ALLOW_ALWAYS]
    )
    verdict = guarded_modes(home=str(home)).decide(
        request, context(str(session), mode=PermissionMode.AUTO_APPROVE)
    )
    assert isinstance(verdict, Forward)


PREFIXES = """
[[rule]]
id = "line-status"
command_line = "git status"
action = "deny"

[[rule]]
id = "word-status"
command = "git status"
action = "deny"
"""


@pytest.mark.parametrize(
    ("line", "by"),
    [
        ("git status", "rule:line-status"),
        ("git status -s", "rule:line-status"),
        ("git status\t-s", "rule:line-status"),
        ("git statusx; rm -rf build", "mode:Ask"),
        ("git statusx", "mode:Ask"),
        ("git status; rm -rf build", "rule:word-status"),  # `;` ends the word, not the prefix
    ],
)
def test_a_command_prefix_ends_at_a_word(line: str, by: str, home: Path, session: Path) -> None:
    verdict = policy(PREFIXES, str(home)).decide(
        permission("Execute", command=line), context(str(session))
    )
    assert decided_by(verdict) == by


def test_a_url_prefix_still_compares_characters(home: Path, session: Path) -> None:
    text = '[[rule]]\nid = "api"\nurl = "https://api.example.com/v"\naction = "allow"\n'
    verdict = policy(text, str(home)).decide(
        permission("Fetch", url="https://api.example.com/v2/x"), context(str(session))
    )
    assert decided_by(verdict) == "rule:api"
