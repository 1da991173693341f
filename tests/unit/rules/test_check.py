"""What `corral policy check` reports: every problem once, in file order, in plain words."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.rules import PolicyError, parse_policy


def problems(text: str, home: Path) -> list[tuple[int | None, str]]:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, source="p.toml", home=str(home))
    return [(p.line, p.message) for p in caught.value.problems]


def test_problems_come_in_the_order_of_their_lines(home: Path) -> None:
    text = (
        'mode = "Sometimes"\n[guards]\nrm-root = "maybe"\n[[rule]]\nid = "a"\naction = "permit"\n'
    )
    assert [line for line, _ in problems(text, home)] == [1, 3, 6]


def test_a_rule_with_a_wrong_field_still_gets_its_cross_field_checks(home: Path) -> None:
    text = '[[rule]]\nid = "a"\naction = "ask"\ndeadline = -1\ntool = "Read"\ncommand = "ls"\n'
    found = problems(text, home)
    assert [line for line, _ in found] == [4, 5]
    assert "positive number of seconds" in found[0][1]
    assert "apply only to tool = Execute" in found[1][1]


def test_a_rule_with_a_wrong_field_still_counts_for_duplicate_ids(home: Path) -> None:
    text = '[[rule]]\nid = "a"\nalways = 1\naction = "deny"\n[[rule]]\nid = "a"\naction = "deny"\n'
    assert (5, "rule id 'a' is used twice (first at line 1)") in problems(text, home)


def test_a_rule_without_an_action_still_counts_for_duplicate_ids(home: Path) -> None:
    text = '[[rule]]\nid = "a"\n[[rule]]\nid = "a"\naction = "deny"\n'
    assert (3, "rule id 'a' is used twice (first at line 1)") in problems(text, home)


def test_a_wrong_on_timeout_is_one_problem_not_two(home: Path) -> None:
    text = '[[rule]]\nid = "a"\naction = "ask"\non_timeout = "maybe"\nmessage = "m"\n'
    found = problems(text, home)
    assert len(found) == 1 and found[0][0] == 4 and "unknown `on_timeout`" in found[0][1]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('[[rule]]\nid = "a\naction = "deny"\n', 2),
        ('[[rule]]\nid = "a"\naction = "deny"\nmessage = "no', 4),
        ('[[rule]]\nid = \'a\naction = "deny"\n', 2),
        ('description = """two\nlines\n[[rule]]\nid = "a"\n', 1),
    ],
    ids=["newline in a string", "at the end", "literal string", "multi-line string"],
)
def test_an_unterminated_string_is_named_with_its_line(text: str, line: int, home: Path) -> None:
    ((at, message),) = problems(text, home)
    assert at == line
    assert message.startswith("unterminated string")


def test_an_allow_by_command_line_prefix_is_warned_about(home: Path) -> None:
    text = '[[rule]]\nid = "st"\ncommand_line = "git status"\naction = "allow"\n'
    (warning,) = parse_policy(text, source="p.toml", home=str(home)).spec.warnings
    assert warning.line == 3
    assert "also matches chained commands" in warning.message and "'st'" in warning.message


@pytest.mark.parametrize(
    "rule",
    [
        'command_line = "git status"\naction = "deny"\n',
        'command_line = { regex = "^git status$" }\naction = "allow"\n',
        'command = "git status"\naction = "allow"\n',
    ],
)
def test_other_command_rules_are_not_warned_about(rule: str, home: Path) -> None:
    text = f'[[rule]]\nid = "st"\n{rule}'
    assert parse_policy(text, source="p.toml", home=str(home)).spec.warnings == ()
