"""`elicitation/create`: the agent's form, as a corral Question request.

What flows in: the request's params (`mode`, `message`, the form's
`requestedSchema`, or `schema`: `properties` keyed by field name, and
`required`), then the engine's `QuestionsAnswer`. What flows out: the
`Question`s to show, then the agent's answer in its own shape:
`{"action": "accept", "content": {field: value}}`, `{"action":
"decline"}` or `{"action": "cancel"}`. Pure data: no I/O.

Fields (tagged by `type`, the JSON-schema subset ACP and MCP share):
- `string` → a free-text question; with `enum` (or `oneOf` of
  `{const, title}`) a single choice; the answer is the text or the chosen
  value;
- `number` / `integer` → a free-text question; the answer is parsed as a
  number (an answer that is not one declines the form: the agent would
  only reject it);
- `boolean` → a Yes / No choice, answered `true` / `false`;
- `array` whose `items` have an `enum` (or `anyOf` of `{const, title}`)
  → a multi-select; the answer is the list of chosen values.

One question per field, in the form's order, its id the field's name.
What corral cannot represent is declined at once, as before: a `url`
elicitation (corral opens no links for the user), a field of an unknown
type, a choice field with no choices, a form with no fields or more than
`MAX_FIELDS` of them (`FormOrDecline` says why).

Answering: a field answered with empty text, or no choice, is left out of
`content`; a form where nothing was filled in, or a required field was
left out, is declined (that is also what `generate`'s Decline policy,
which answers every question with empty text, comes to). A withdrawn
request (cancel, turn end, close) is `cancel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.events import (
    Choice,
    ChoicesAnswer,
    Question,
    QuestionAnswer,
    QuestionsAnswer,
    TextAnswer,
)

__all__ = ["CANCEL", "DECLINE", "MAX_FIELDS", "Form", "form_of"]

MAX_FIELDS = 32
DECLINE: dict[str, object] = {"action": "decline"}
CANCEL: dict[str, object] = {"action": "cancel"}
_YES_NO = (Choice(id="true", label="Yes"), Choice(id="false", label="No"))


@attrs.frozen(kw_only=True)
class _Field:
    name: str
    kind: str  # string, number, integer, boolean, array
    required: bool


@attrs.frozen(kw_only=True)
class Form:
    """A form corral shows: its questions, and how each answer goes back."""

    fields: tuple[_Field, ...]
    questions: tuple[Question, ...]

    def reply(self, answer: object) -> dict[str, object]:
        """The agent's answer to this form, from the engine's."""
        if not isinstance(answer, QuestionsAnswer):
            return DECLINE
        content: dict[str, object] = {}
        for field, given in zip(self.fields, answer.answers, strict=False):
            value = _value(field, given)
            if value is _INVALID:
                return DECLINE
            if value is not None:
                content[field.name] = value
        missing = any(f.required and f.name not in content for f in self.fields)
        if not content or missing:
            return DECLINE
        return {"action": "accept", "content": content}


_INVALID = object()
_BOOLEANS: Mapping[str, object] = {"true": True, "yes": True, "false": False, "no": False}


def _value(field: _Field, given: QuestionAnswer) -> object:
    """The field's value on the wire; None when left empty, `_INVALID` when unusable."""
    match given:
        case ChoicesAnswer(choices=()):
            return None
        case ChoicesAnswer(choices=chosen) if field.kind == "array":
            return list(chosen)
        case ChoicesAnswer(choices=(first, *_)) if field.kind == "boolean":
            return first == "true"
        case ChoicesAnswer(choices=(first, *_)):
            return first
        case TextAnswer(text=text) if not text.strip():
            return None
        case TextAnswer(text=text) if field.kind in ("number", "integer"):
            return _number(text.strip(), integer=field.kind == "integer")
        case TextAnswer(text=text) if field.kind == "boolean":
            return _BOOLEANS.get(text.strip().lower(), _INVALID)
        case TextAnswer(text=text) if field.kind == "array":
            return [part.strip() for part in text.split(",") if part.strip()]
        case TextAnswer(text=text):
            return text
    return _INVALID


def _number(text: str, *, integer: bool) -> object:
    try:
        return int(text) if integer else float(text)
    except ValueError:
        return _INVALID


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) and value else None


def _choices(raw: Mapping[str, Any], titled_key: str) -> tuple[Choice, ...]:
    """`enum` (bare values) or `oneOf` / `anyOf` of `{const, title}` (titled ones)."""
    values = raw.get("enum")
    if isinstance(values, list):
        return tuple(Choice(id=v, label=v) for v in values if isinstance(v, str))
    titled = raw.get(titled_key)
    choices = []
    for option in titled if isinstance(titled, list) else []:
        if isinstance(option, dict) and isinstance(option.get("const"), str):
            label = _text(option, "title") or option["const"]
            description = _text(option, "description")
            choices.append(Choice(id=option["const"], label=label, description=description))
    return tuple(choices)


def _question(name: str, raw: Mapping[str, Any], message: str) -> Question | str:
    """One field as a question, or why corral cannot show it."""
    kind = raw.get("type")
    header = _text(raw, "title") or name
    description = _text(raw, "description")
    text = message if description is None else f"{message}\n{header}: {description}"
    common: dict[str, Any] = {"id": name, "text": text, "header": header}
    match kind:
        case "string":
            choices = _choices(raw, "oneOf")
            explicit = "enum" in raw or "oneOf" in raw
            if explicit and not choices:
                return f"its field {name!r} offers no choices"
            return Question(choices=choices, allows_free_text=not choices, **common)
        case "number" | "integer":
            return Question(allows_free_text=True, **common)
        case "boolean":
            return Question(choices=_YES_NO, **common)
        case "array":
            items = raw.get("items")
            choices = _choices(items, "anyOf") if isinstance(items, dict) else ()
            if not choices:
                return f"its list field {name!r} offers no choices"
            return Question(choices=choices, multi_select=True, **common)
    return f"its field {name!r} is of a type corral cannot show ({kind!r})"


def form_of(params: Mapping[str, Any]) -> Form | str:
    """The form to show, or why corral declines it (see the module header)."""
    mode = params.get("mode", "form")
    if mode != "form":
        return f"it is a {mode!r} elicitation (corral shows forms only)"
    schema = params.get("requestedSchema", params.get("schema"))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return "its form has no fields"
    if len(properties) > MAX_FIELDS:
        return f"its form has {len(properties)} fields (corral shows at most {MAX_FIELDS})"
    assert isinstance(schema, dict)
    required = schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    message = _text(params, "message") or "The agent asks:"
    return _form(properties, required_names, message)


def _form(properties: Mapping[str, Any], required: set[object], message: str) -> Form | str:
    fields: list[_Field] = []
    questions: list[Question] = []
    for name, raw in properties.items():
        question = _question(name, raw if isinstance(raw, dict) else {}, message)
        if isinstance(question, str):
            return question
        kind = raw.get("type") if isinstance(raw, dict) else None
        fields.append(_Field(name=name, kind=str(kind), required=name in required))
        questions.append(question)
    return Form(fields=tuple(fields), questions=tuple(questions))
