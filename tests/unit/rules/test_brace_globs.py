"""Path globs with braces around wildcards: a deny written so must deny."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.policy import Decide, Forward
from corral.pipeline.rules import PolicyError

from .support import context, permission, policy

KEYS_DENIED = """
mode = "AutoApprove"

[[rule]]
id = "no-keys"
tool = "Read"
path = "{*.env,*.pem,secrets/**}"
action = "deny"
message = "no keys"
"""


def by(verdict: Decide | Forward) -> str:
    return verdict.decided_by if isinstance(verdict, Decide) else f"ask:{verdict.reason}"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/prod.env", "rule:no-keys"),
        ("server.pem", "rule:no-keys"),
        ("deep/down/.x.pem", "rule:no-keys"),
        ("secrets/a/b.txt", "rule:no-keys"),
        ("src/app.py", "mode:AutoApprove"),
        ("server.pem.txt", "mode:AutoApprove"),
    ],
)
def test_a_deny_rule_with_wildcards_in_braces_matches(
    path: str, expected: str, home: Path, session: Path
) -> None:
    rules = policy(KEYS_DENIED, str(home))
    verdict = rules.decide(
        permission("Read", path=path), context(str(session), mode=PermissionMode.AUTO_APPROVE)
    )
    assert by(verdict) == expected


def test_braces_that_expand_too_far_are_a_problem_with_a_line(home: Path) -> None:
    text = '[[rule]]\nid = "x"\npath = "{1..99}{1..99}"\naction = "deny"\n'
    with pytest.raises(PolicyError, match="bad glob"):
        policy(text, str(home))
