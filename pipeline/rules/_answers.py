"""What a rule answers: a question's answer, the deny a request offers, a deadline's decision.

Helpers of `RulePolicy` (`_policy.py`): each turns what a rule says into an
`Answer` the request can take, or says why it cannot.
"""

from __future__ import annotations

from ..events import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionAnswer,
    TextAnswer,
)
from ..policy import Decide
from ..records import PolicyDecider
from ._model import Rule, TimeoutChoice

__all__ = ["deny_answer", "question_answer", "timeout_decision"]


def question_answer(rule: Rule, question: Question) -> QuestionAnswer | str:
    """The rule's answer to one question, or why it cannot answer it."""
    if rule.choices and question.choices:
        if rule.choices == ("first",):
            return ChoicesAnswer((question.choices[0].id,))
        chosen = []
        for wanted in rule.choices:
            found = next(
                (
                    c
                    for c in question.choices
                    if wanted in (c.id, c.label) or wanted.casefold() == c.label.casefold()
                ),
                None,
            )
            if found is None:
                return f"choice {wanted!r} is not offered"
            chosen.append(found.id)
        if len(chosen) > 1 and not question.multi_select:
            return "several choices for a single-choice question"
        return ChoicesAnswer(tuple(chosen))
    if rule.text is not None and (not question.choices or question.allows_free_text):
        return TextAnswer(rule.text)
    return "its answer does not fit this question"


def deny_answer(request: PermissionRequest, *, always: bool) -> PermissionAnswer | None:
    offered = request.options
    order = (PermissionChoice.DENY_ALWAYS, PermissionChoice.DENY_ONCE)
    for choice in order if always else reversed(order):
        if choice in offered:
            return PermissionAnswer(choice)
    return None


def timeout_decision(
    request: PermissionRequest, choice: TimeoutChoice, reason: PolicyDecider, message: str | None
) -> Decide | None:
    answer: Answer | None
    if choice.allows:
        wanted = [PermissionChoice.ALLOW_ONCE]
        if choice is TimeoutChoice.ALLOW_ALWAYS:
            wanted.insert(0, PermissionChoice.ALLOW_ALWAYS)
        offered = [c for c in wanted if c in request.options]
        answer = PermissionAnswer(offered[0]) if offered else None
    else:
        answer = deny_answer(request, always=choice is TimeoutChoice.DENY_ALWAYS)
    if answer is None:
        return None
    text = message or "no answer before the deadline"
    return Decide(answer=answer, decided_by=reason, message=None if choice.allows else text)
