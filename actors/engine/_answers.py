"""Is an answer within what the request offered? One function, no state.

Returns None for a valid answer, otherwise the reason it is refused. The
request stays open when an answer is refused.
"""

from __future__ import annotations

from ...pipeline.events import (
    Answer,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionRequest,
    Question,
    QuestionAnswer,
    QuestionRequest,
    QuestionsAnswer,
    Request,
    TextAnswer,
)

__all__ = ["refusal"]


def refusal(request: Request, answer: Answer) -> str | None:
    match request, answer:
        case PermissionRequest(options=options), PermissionAnswer(choice=choice):
            if choice not in options:
                offered = ", ".join(option.value for option in options)
                return f"{choice.value} was not offered (offered: {offered})"
            return None
        case QuestionRequest(questions=questions), QuestionsAnswer(answers=answers):
            if len(answers) != len(questions):
                return f"expected {len(questions)} answers, one per question, got {len(answers)}"
            for index, (question, given) in enumerate(zip(questions, answers, strict=True)):
                problem = _question_refusal(question, given)
                if problem is not None:
                    return f"question {index + 1} ({question.id}): {problem}"
            return None
        case PermissionRequest(), _:
            return 'this is a permission request: answer with {"Permission": choice}'
        case _:
            return 'this is a question: answer with {"Question": [one answer per question]}'


def _question_refusal(question: Question, given: QuestionAnswer) -> str | None:
    match given:
        case TextAnswer():
            if question.choices and not question.allows_free_text:
                return "free text is not allowed; choose among the choices"
            return None
        case ChoicesAnswer(choices=chosen):
            if not chosen:
                return "no choice given"
            if len(chosen) > 1 and not question.multi_select:
                return "only one choice is allowed"
            offered = {choice.id for choice in question.choices}
            unknown = [choice for choice in chosen if choice not in offered]
            if unknown:
                return f"not offered: {', '.join(unknown)}"
            if len(set(chosen)) != len(chosen):
                return "a choice is given twice"
            return None
