"""Paths after `..` and symbolic links: escapes never widen an allow."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.policy import Decide, Forward
from corral.pipeline.rules import guarded_modes

from .support import context, permission, policy

SRC_ALLOWED = """
[[rule]]
id = "src"
tool = ["Edit", "Read"]
path = "src/**"
action = "allow"
"""

AUTO = PermissionMode.AUTO_APPROVE


def by(verdict: Decide | Forward) -> str:
    return verdict.decided_by if isinstance(verdict, Decide) else f"ask:{verdict.reason}"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def test_dot_dot_out_of_the_session_is_outside(home: Path, session: Path) -> None:
    verdict = guarded_modes(home=str(home)).decide(
        permission("Edit", path="src/../../escape.txt"), context(str(session), mode=AUTO)
    )
    assert by(verdict) == "guard:write-outside-session"


def test_dot_dot_that_stays_inside_is_inside(home: Path, session: Path) -> None:
    verdict = policy(SRC_ALLOWED, str(home)).decide(
        permission("Edit", path="docs/../src/a.py"), context(str(session))
    )
    assert by(verdict) == "rule:src"


def test_a_link_out_of_the_session_does_not_match_an_allow(
    home: Path, session: Path, outside: Path
) -> None:
    (session / "src" / "link").symlink_to(outside)
    verdict = policy(SRC_ALLOWED, str(home)).decide(
        permission("Edit", path="src/link/x.py"), context(str(session))
    )
    assert by(verdict) == "ask:mode:Ask"


def test_a_link_out_of_the_session_is_caught_by_the_write_guard(
    home: Path, session: Path, outside: Path
) -> None:
    (session / "src" / "link").symlink_to(outside)
    verdict = guarded_modes(home=str(home)).decide(
        permission("Edit", path="src/link/x.py"), context(str(session), mode=AUTO)
    )
    assert by(verdict) == "guard:write-outside-session"


def test_a_link_that_stays_inside_still_matches(home: Path, session: Path) -> None:
    (session / "src" / "real").mkdir()
    (session / "src" / "alias").symlink_to(session / "src" / "real")
    verdict = policy(SRC_ALLOWED, str(home)).decide(
        permission("Edit", path="src/alias/x.py"), context(str(session))
    )
    assert by(verdict) == "rule:src"


def test_a_link_widens_a_deny(home: Path, session: Path) -> None:
    (session / "secrets").mkdir()
    (session / "innocent").symlink_to(session / "secrets")
    text = '[[rule]]\nid = "secrets"\npath = "secrets/**"\naction = "deny"\n'
    verdict = policy(text, str(home)).decide(
        permission("Read", path="innocent/key"), context(str(session))
    )
    assert by(verdict) == "rule:secrets"


def test_location_outside_sees_dot_dot(home: Path, session: Path) -> None:
    text = '[[rule]]\nid = "out"\nlocation = "outside"\naction = "deny"\n'
    verdict = policy(text, str(home)).decide(permission("Read", path="../x"), context(str(session)))
    assert by(verdict) == "rule:out"


def test_a_file_linked_to_a_secret_is_a_secret(home: Path, session: Path) -> None:
    key = home / ".ssh" / "id_ed25519"
    key.write_text("private")
    (session / "src" / "notes.txt").symlink_to(key)
    verdict = guarded_modes(home=str(home)).decide(
        permission("Read", path="src/notes.txt"), context(str(session), mode=AUTO)
    )
    assert by(verdict) == "guard:secret-read"


def test_a_session_directory_reached_through_a_link_is_still_inside(
    home: Path, session: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "work-link"
    linked.symlink_to(session)
    verdict = policy(SRC_ALLOWED, str(home)).decide(
        permission("Edit", path=f"{linked}/src/a.py"), context(str(linked))
    )
    assert by(verdict) == "rule:src"


def test_an_absolute_glob_matches_through_a_linked_prefix(
    home: Path, session: Path, outside: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(outside)
    text = f'[[rule]]\nid = "alias"\npath = "{alias}/**"\naction = "allow"\n'
    text += 'override_guards = ["write-outside-session"]\n'
    verdict = policy(text, str(home)).decide(
        permission("Edit", path=f"{alias}/x.txt"), context(str(session), mode=AUTO)
    )
    assert by(verdict) == "rule:alias"


COMMAND_WRITES = [
    ("echo x > src/out.txt", "mode:AutoApprove"),
    ("echo x > ../escape", "guard:write-outside-session"),
    ("echo x 2>/dev/null >> /tmp/../etc/x", "guard:write-outside-session"),
    ("make > /dev/null 2>&1", "mode:AutoApprove"),
    ("cd .. && touch x", "guard:write-outside-session"),
    ("cd src && touch x", "mode:AutoApprove"),
    ('cd "$SOMEWHERE" && touch x', "guard:write-outside-session"),
    ("cp /etc/hosts src/", "mode:AutoApprove"),
    ("cp src/a /etc/", "guard:write-outside-session"),
    ("mv src/a ../b", "guard:write-outside-session"),
    ("echo x | tee ~/notes", "guard:write-outside-session"),
    ("dd if=/dev/zero of=/var/disk", "guard:write-outside-session"),
    ("chmod 600 src/a", "mode:AutoApprove"),
    ("chmod 600 /etc/shadow", "guard:write-outside-session"),
]


@pytest.mark.parametrize(("command", "expected"), COMMAND_WRITES)
def test_commands_that_write_outside_the_session_are_guarded(
    command: str, expected: str, home: Path, session: Path
) -> None:
    verdict = guarded_modes(home=str(home)).decide(
        permission("Execute", command=command), context(str(session), mode=AUTO)
    )
    assert by(verdict) == expected


def test_a_commands_cwd_is_its_base(home: Path, session: Path, outside: Path) -> None:
    verdict = guarded_modes(home=str(home)).decide(
        permission("Execute", command="touch x", cwd=str(outside)),
        context(str(session), mode=AUTO),
    )
    assert by(verdict) == "guard:write-outside-session"


def test_relative_paths_are_relative_to_the_session_not_to_corral(
    home: Path, session: Path, tmp_path: Path
) -> None:
    os.chdir(tmp_path)  # somewhere else entirely
    verdict = policy(SRC_ALLOWED, str(home)).decide(
        permission("Edit", path="src/a.py"), context(str(session))
    )
    assert by(verdict) == "rule:src"
