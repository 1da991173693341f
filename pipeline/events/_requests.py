"""Requests the agent waits on (permission, questions) and the app's answers.

A request is opened by the agent, shown to the app (or decided by the
policy), answered exactly once, and closed. The request says what it
offers; the engine refuses answers outside that offer.
"""

from __future__ import annotations

import enum

import attrs

from ._shape import Fields, ShapeError, tag_of
from ._tools import ToolUpdate

__all__ = [
    "Answer",
    "Choice",
    "ChoicesAnswer",
    "PermissionAnswer",
    "PermissionChoice",
    "PermissionRequest",
    "Question",
    "QuestionAnswer",
    "QuestionRequest",
    "QuestionsAnswer",
    "Request",
    "TextAnswer",
    "answer_from_wire",
    "request_from_wire",
]


class PermissionChoice(enum.StrEnum):
    ALLOW_ONCE = "AllowOnce"
    ALLOW_ALWAYS = "AllowAlways"
    DENY_ONCE = "DenyOnce"
    DENY_ALWAYS = "DenyAlways"

    @property
    def allows(self) -> bool:
        return self in (PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS)


_CHOICES = {choice.value: choice for choice in PermissionChoice}


@attrs.frozen(kw_only=True)
class PermissionRequest:
    id: str
    tool: ToolUpdate
    options: tuple[PermissionChoice, ...]
    detail: str | None = None

    def to_wire(self) -> object:
        return {
            "Permission": {
                "id": self.id,
                "tool": self.tool.to_wire(),
                "options": [option.value for option in self.options],
                "detail": self.detail,
            }
        }


@attrs.frozen(kw_only=True)
class Choice:
    id: str
    label: str
    description: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "label": self.label, "description": self.description}


@attrs.frozen(kw_only=True)
class Question:
    id: str
    text: str
    choices: tuple[Choice, ...] = ()  # empty means free text only
    header: str | None = None
    multi_select: bool = False
    allows_free_text: bool = False

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "text": self.text,
            "header": self.header,
            "choices": [choice.to_wire() for choice in self.choices],
            "multi_select": self.multi_select,
            "allows_free_text": self.allows_free_text,
        }


@attrs.frozen(kw_only=True)
class QuestionRequest:
    id: str
    questions: tuple[Question, ...]

    def to_wire(self) -> object:
        return {
            "Question": {
                "id": self.id,
                "questions": [question.to_wire() for question in self.questions],
            }
        }


Request = PermissionRequest | QuestionRequest


def _question_from_wire(raw: object, path: str) -> Question:
    fields = Fields(raw, path)
    choices = []
    for item_path, item in fields.array("choices"):
        choice = Fields(item, item_path)
        choices.append(
            Choice(
                id=choice.string("id"),
                label=choice.string("label"),
                description=choice.opt_string("description"),
            )
        )
    return Question(
        id=fields.string("id"),
        text=fields.string("text"),
        header=fields.opt_string("header"),
        choices=tuple(choices),
        multi_select=fields.flag("multi_select"),
        allows_free_text=fields.flag("allows_free_text"),
    )


def request_from_wire(raw: object, path: str) -> Request:
    tag, payload = tag_of(raw, path)
    fields = Fields(payload, f"{path}.{tag}")
    if tag == "Permission":
        options = []
        for item_path, item in fields.array("options"):
            if item not in _CHOICES:
                raise ShapeError(item_path, f"unknown permission choice {item!r}")
            options.append(_CHOICES[str(item)])
        return PermissionRequest(
            id=fields.string("id"),
            tool=ToolUpdate.from_wire(fields.value("tool"), f"{fields.path}.tool"),
            options=tuple(options),
            detail=fields.opt_string("detail"),
        )
    if tag == "Question":
        return QuestionRequest(
            id=fields.string("id"),
            questions=tuple(_question_from_wire(q, p) for p, q in fields.array("questions")),
        )
    raise ShapeError(path, f"unknown request kind {tag!r}")


@attrs.frozen
class PermissionAnswer:
    choice: PermissionChoice

    def to_wire(self) -> object:
        return {"Permission": self.choice.value}


@attrs.frozen
class ChoicesAnswer:
    """The ids of the chosen choices (one unless the question is multi-select)."""

    choices: tuple[str, ...]

    def to_wire(self) -> object:
        return {"Choices": list(self.choices)}


@attrs.frozen
class TextAnswer:
    text: str

    def to_wire(self) -> object:
        return {"Text": self.text}


QuestionAnswer = ChoicesAnswer | TextAnswer


@attrs.frozen
class QuestionsAnswer:
    """One entry per question, in order."""

    answers: tuple[QuestionAnswer, ...]

    def to_wire(self) -> object:
        return {"Question": [answer.to_wire() for answer in self.answers]}


Answer = PermissionAnswer | QuestionsAnswer


def _question_answer_from_wire(raw: object, path: str) -> QuestionAnswer:
    tag, payload = tag_of(raw, path)
    holder = Fields({tag: payload}, path)
    if tag == "Choices":
        return ChoicesAnswer(holder.strings("Choices"))
    if tag == "Text":
        return TextAnswer(holder.string("Text"))
    raise ShapeError(path, f"unknown question answer {tag!r}; expected Choices or Text")


def answer_from_wire(raw: object, path: str) -> Answer:
    tag, payload = tag_of(raw, path)
    if tag == "Permission":
        if payload not in _CHOICES:
            raise ShapeError(
                f"{path}.Permission", f"expected one of {', '.join(_CHOICES)}, got {payload!r}"
            )
        return PermissionAnswer(_CHOICES[str(payload)])
    if tag == "Question":
        if not isinstance(payload, list):
            raise ShapeError(f"{path}.Question", "expected an array of answers")
        return QuestionsAnswer(
            tuple(
                _question_answer_from_wire(item, f"{path}.Question[{index}]")
                for index, item in enumerate(payload)
            )
        )
    raise ShapeError(path, f"unknown answer kind {tag!r}; expected Permission or Question")
