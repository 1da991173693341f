"""Questions answered by rules (for CI), or forwarded."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.events import ChoicesAnswer, QuestionsAnswer, TextAnswer
from corral.pipeline.policy import Decide, Forward
from corral.pipeline.rules import guarded_modes

from .support import context, policy, question

RULES = """
deadline = 120

[[rule]]
id = "codex-asks"
request = "question"
agent = "codex"
action = "ask"
deadline = 9

[[rule]]
id = "proceed"
request = "question"
question = { regex = "(?i)proceed|continue" }
choice = "Yes"
action = "answer"

[[rule]]
id = "pick-both"
request = "question"
question = "Which linters"
choice = ["ruff", "mypy"]
action = "answer"

[[rule]]
id = "name"
request = "question"
question = { glob = "*name*" }
text = "corral-ci"
action = "answer"

[[rule]]
id = "first"
request = "question"
question = "Pick"
choice = "first"
action = "answer"
"""


def test_a_choice_is_chosen_by_label(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Shall I proceed?", choices=["No", "yes"]), context(str(session))
    )
    assert verdict == Decide(
        answer=QuestionsAnswer((ChoicesAnswer(("c1",)),)), decided_by="rule:proceed"
    )


def test_several_choices_for_a_multi_select(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Which linters?", choices=["mypy", "ruff", "pylint"], multi=True),
        context(str(session)),
    )
    assert isinstance(verdict, Decide)
    assert verdict.answer == QuestionsAnswer((ChoicesAnswer(("c1", "c0")),))


def test_several_choices_do_not_fit_a_single_select(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Which linters?", choices=["mypy", "ruff"]), context(str(session))
    )
    assert isinstance(verdict, Forward)


def test_free_text_answers_an_open_question(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("What name should the package have?"), context(str(session))
    )
    assert isinstance(verdict, Decide)
    assert verdict.answer == QuestionsAnswer((TextAnswer("corral-ci"),))


def test_the_first_choice(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Pick a color", choices=["red", "blue"]), context(str(session))
    )
    assert isinstance(verdict, Decide)
    assert verdict.answer == QuestionsAnswer((ChoicesAnswer(("c0",)),))


def test_a_rule_whose_choice_is_not_offered_passes_to_the_next(home: Path, session: Path) -> None:
    explanation = policy(RULES, str(home)).explain_request(
        question("Pick one to continue", choices=["Stop", "Go"]), context(str(session))
    )
    assert explanation.decided_by == "rule:first"
    assert ("proceed", "choice 'Yes' is not offered") in explanation.subjects[0].skipped


def test_every_question_must_be_answered_or_the_request_is_forwarded(
    home: Path, session: Path
) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Proceed?", "Something unknown", choices=["Yes"]), context(str(session))
    )
    assert isinstance(verdict, Forward)
    assert verdict.reason is None and verdict.deadline_seconds == 120


def test_a_question_rule_can_ask_with_its_own_deadline(home: Path, session: Path) -> None:
    verdict = policy(RULES, str(home)).decide(
        question("Proceed?", choices=["Yes"]), context(str(session), agent="codex")
    )
    assert verdict == Forward(deadline_seconds=9, reason="rule:codex-asks")


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_the_mode_never_answers_a_question(mode: PermissionMode, home: Path, session: Path) -> None:
    verdict = guarded_modes(home=str(home)).decide(
        question("Proceed?", choices=["Yes"]), context(str(session), mode=mode)
    )
    assert verdict == Forward()


def test_permission_rules_never_answer_questions(home: Path, session: Path) -> None:
    text = '[[rule]]\nid = "all"\naction = "allow"\n'
    verdict = policy(text, str(home)).decide(question("Proceed?"), context(str(session)))
    assert isinstance(verdict, Forward)
