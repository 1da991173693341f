"""Whatever an agent sends, the policy answers: it never raises inside the engine."""

from __future__ import annotations

from pathlib import Path

from corral.pipeline.commands import PermissionMode
from corral.pipeline.rules import guarded_modes, parse_shell
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .support import context, permission, policy

SHELLISH = st.text(
    alphabet=st.sampled_from(list("ab rm-f/~.*$(){}[]|&;<>'\"`\\\n\t#=!0123\x00é")), max_size=60
)
RULES = """
[[rule]]
id = "git"
command = ["git status", { glob = "ls *" }, { regex = "^cat " }]
action = "allow"

[[rule]]
id = "src"
path = ["src/**", "*.md"]
action = "allow"
"""
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(line=SHELLISH)
def test_the_shell_reader_never_raises(line: str) -> None:
    parsed = parse_shell(line)
    assert parsed.parsed or len(parsed.commands) <= 1


@FUZZ
@given(line=SHELLISH)
def test_any_command_line_gets_a_verdict(line: str, home: Path, session: Path) -> None:
    rules = policy(RULES, str(home))
    for mode in (PermissionMode.ASK, PermissionMode.AUTO_APPROVE):
        rules.decide(permission("Execute", command=line), context(str(session), mode=mode))


@FUZZ
@given(path=SHELLISH)
def test_any_path_gets_a_verdict(path: str, home: Path, session: Path) -> None:
    guarded = guarded_modes(home=str(home))
    for kind in ("Read", "Edit", "Delete"):
        guarded.decide(
            permission(kind, path=path, diffs=[path], locations=[path]),
            context(str(session), mode=PermissionMode.AUTO_APPROVE),
        )
