"""Policy files: what loads, and every problem named with its line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.errors import ErrorKind
from corral.pipeline.rules import (
    PRESETS,
    PolicyError,
    load_policy,
    load_preset,
    parse_policy,
    preset_text,
)
from corral.pipeline.rules._model import Action, GuardAction, Location, RequestKind, TimeoutChoice

FULL = """\
version = 1
description = "everything"
mode = "autoapprove"
deadline = 30
on_timeout = "deny"

[guards]
write-outside-session = "ask"
pipe-to-shell = "off"

[[rule]]
id = "git-read"
agent = ["claude", "codex*"]
tool = "execute"
command = ["git status", { glob = "git log *" }, { regex = "^git diff( |$)" }]
action = "allow"
always = true

[[rule]]
id = "no-push"
command_line = { regex = "git push" }
action = "deny"
message = "no pushing"

[[rule]]
id = "tmp-edits"
tool = ["Edit", "Delete"]
path = ["/tmp/**", "*.tmp"]
location = "outside"
action = "allow"
override_guards = ["write-outside-session"]

[[rule]]
id = "web"
host = "*.example.com"
url = "https://"
action = "ask"
deadline = 5
on_timeout = "allow"

[[rule]]
id = "gh"
mcp_server = "github"
mcp_tool = ["get_*"]
action = "allow"

[[rule]]
id = "ci"
request = "question"
question = { regex = "(?i)continue" }
choice = "first"
action = "answer"
"""


def parse(text: str, home: Path) -> object:
    return parse_policy(textwrap.dedent(text), source="p.toml", home=str(home))


def problems(text: str, home: Path) -> list[tuple[int | None, str]]:
    with pytest.raises(PolicyError) as caught:
        parse(text, home)
    return [(p.line, p.message) for p in caught.value.problems]


def test_every_field_of_a_full_policy_loads(home: Path) -> None:
    policy = parse_policy(FULL, source="p.toml", home=str(home))
    spec = policy.spec
    assert spec.mode is PermissionMode.AUTO_APPROVE
    assert spec.deadline == 30 and spec.on_timeout is TimeoutChoice.DENY
    assert spec.guards == {
        "write-outside-session": GuardAction.ASK,
        "pipe-to-shell": GuardAction.OFF,
    }
    git, push, tmp, web, gh, ci = spec.rules
    assert (git.id, git.line, git.tools, git.always) == ("git-read", 11, {"Execute"}, True)
    assert [m.how for m in git.commands] == ["prefix", "glob", "regex"]
    assert push.tools == {"Execute"} and push.message == "no pushing"
    assert tmp.location is Location.OUTSIDE and tmp.override_guards == {"write-outside-session"}
    assert web.action is Action.ASK and web.on_timeout is TimeoutChoice.ALLOW
    assert gh.tools == {"Mcp"}
    assert ci.request is RequestKind.QUESTION and ci.choices == ("first",)
    assert spec.warnings == ()


PROBLEMS = [
    ("version = 2\n", 1, "version 2 is not supported"),
    ('mode = "Yolo"\n', 1, "unknown `mode` 'Yolo'"),
    ('[[rule]]\nid = "a"\naction = "allow"\ncomand = "ls"\n', 4, "did you mean 'command'?"),
    ('[[rule]]\nid = "a"\n', 1, "rule a has no `action`"),
    ('[[rule]]\naction = "allow"\n', 1, "rule 1 has no `id`"),
    ('[[rule]]\nid = "a b"\naction = "allow"\n', 2, "rule id 'a b'"),
    ('[[rule]]\nid = "a"\naction = "permit"\n', 3, "unknown `action` 'permit'"),
    ('[[rule]]\nid = "a"\naction = "allow"\ntool = "Shell"\n', 4, "unknown tool kind 'Shell'"),
    (
        '[[rule]]\nid = "a"\naction = "allow"\ntool = "Read"\ncommand = "ls"\n',
        4,
        "apply only to tool = Execute",
    ),
    (
        '[[rule]]\nid = "a"\naction = "allow"\ntool = "Execute"\npath = "x"\n',
        5,
        "do not apply to Execute",
    ),
    (
        '[[rule]]\nid = "a"\naction = "allow"\nmessage = "m"\n',
        4,
        "`message` does not apply to action 'allow'",
    ),
    ('[[rule]]\nid = "a"\naction = "deny"\ndeadline = 3\n', 4, "`deadline` does not apply"),
    ('[[rule]]\nid = "a"\naction = "ask"\ndeadline = -1\n', 4, "positive number of seconds"),
    ('[[rule]]\nid = "a"\naction = "allow"\ncommand = { regex = "(" }\n', 4, "bad regex '('"),
    (
        '[[rule]]\nid = "a"\naction = "allow"\ncommand = { exact = "ls" }\n',
        4,
        "one of prefix, glob or regex",
    ),
    ('[[rule]]\nid = "a"\naction = "allow"\nagent = 3\n', 4, "non-empty string or list"),
    ('[[rule]]\nid = "a"\naction = "allow"\nalways = "yes"\n', 4, "true or false"),
    (
        '[[rule]]\nid = "a"\naction = "allow"\noverride_guards = ["rm-rf"]\n',
        4,
        "unknown guard 'rm-rf'",
    ),
    (
        '[[rule]]\nid = "a"\naction = "answer"\nchoice = "x"\n',
        4,
        "`choice` does not apply to a permission rule",
    ),
    (
        '[[rule]]\nid = "a"\nrequest = "question"\naction = "answer"\n',
        4,
        "needs `choice` or `text`",
    ),
    ('[[rule]]\nid = "a"\nrequest = "question"\naction = "allow"\n', 4, '"answer" or "ask"'),
    (
        '[[rule]]\nid = "a"\nrequest = "question"\naction = "ask"\ntool = "Read"\n',
        5,
        "`tool` does not apply to a question rule",
    ),
    ('[guards]\nrm-root = "maybe"\n', 2, "unknown `rm-root` 'maybe'"),
    ('[guards]\nrm_root = "off"\n', 2, "did you mean 'rm-root'?"),
    (
        '[[rule]]\nid = "a"\naction = "deny"\n[[rule]]\nid = "a"\naction = "deny"\n',
        4,
        "used twice (first at line 1)",
    ),
    ("colour = 1\n", 1, "unknown key in the policy 'colour'"),
    ("[[rule]\nid = 1\n", 1, "not TOML"),
    ("a = 1\nb = \n", 2, "not TOML"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), PROBLEMS, ids=[p[2] for p in PROBLEMS])
def test_a_problem_is_named_with_its_line(text: str, line: int, fragment: str, home: Path) -> None:
    found = problems(text, home)
    assert any(at == line and fragment in message for at, message in found), found


def test_every_problem_is_reported_not_just_the_first(home: Path) -> None:
    text = '[[rule]]\nid = "a"\naction = "allow"\ntool = "Shell"\n[[rule]]\nid = "b"\naction = "nope"\n'
    assert [line for line, _ in problems(text, home)] == [4, 7]


def test_a_policy_error_is_an_invalid_configuration_with_structured_problems(home: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        parse('[[rule]]\nid = "a"\naction = "permit"\n', home)
    body = caught.value.body()
    assert body["kind"] == ErrorKind.INVALID_CONFIGURATION.value
    assert body["file"] == "p.toml"
    assert body["problems"] == [
        {
            "line": 3,
            "message": "unknown `action` 'permit' (expected one of allow, deny, ask, answer)",
        }
    ]
    assert "p.toml:3:" in body["message"]


def test_a_key_in_a_multiline_string_does_not_fool_the_locator(home: Path) -> None:
    text = 'description = """\n[[rule]]\naction = 1\n"""\n[[rule]]\nid = "a"\naction = "x"\n'
    assert problems(text, home)[0][0] == 7


def test_a_rule_after_a_catch_all_is_a_warning_not_an_error(home: Path) -> None:
    policy = parse_policy(
        '[[rule]]\nid = "all"\naction = "deny"\n\n[[rule]]\nid = "late"\ntool = "Read"\naction = "allow"\n',
        source="p.toml",
        home=str(home),
    )
    (warning,) = policy.spec.warnings
    assert warning.line == 5 and "'late' can never match" in warning.message


def test_a_missing_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(tmp_path / "nope.toml")
    assert "cannot read" in caught.value.message


def test_a_file_loads_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[[rule]]\nid = "a"\naction = "deny"\n')
    assert load_policy(path).spec.source == str(path)


@pytest.mark.parametrize("name", PRESETS)
def test_each_shipped_preset_loads_and_sets_its_mode(name: str) -> None:
    policy = load_preset(name)
    assert policy.spec.mode is PermissionMode(name)
    assert load_policy(f"preset:{name}").spec == policy.spec


def test_an_unknown_preset_is_a_policy_error() -> None:
    with pytest.raises(PolicyError, match="unknown preset 'Yolo'"):
        load_policy("preset:Yolo")


_COMMENTED_SETTING = re.compile(r"^# (\[\[?[\w.-]+\]\]?|[\w-]+ = .+)$")


def uncommented(text: str) -> str:
    """The preset with every commented-out setting (`# key = value`, `# [table]`) switched on."""
    lines = text.split("\n")
    return "\n".join(
        m.group(1) if (m := _COMMENTED_SETTING.match(line)) else line for line in lines
    )


@pytest.mark.parametrize("name", PRESETS)
def test_each_presets_commented_out_settings_load_when_uncommented(name: str) -> None:
    text = preset_text(name)
    parse_policy(uncommented(text), source=name)


def test_auto_approves_suggested_deadline_applies_to_the_whole_policy() -> None:
    spec = parse_policy(uncommented(preset_text("AutoApprove"))).spec
    assert (spec.deadline, spec.on_timeout) == (300, TimeoutChoice.DENY)
