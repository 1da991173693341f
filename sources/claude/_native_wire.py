"""corral's own `--record-wire` files of Claude Code, re-normalized (for `corral import`).

The file and what every wire's reading shares: `sources/_recorded_wire.py`.
Here: a fresh `ClaudeProtocol` (the live driver's sans-IO state machine)
is brought to the state the live one had, by replaying corral's recorded
stream-json messages as the commands that wrote them, and is fed every
frame the CLI wrote; its events are the session again, as this corral
version normalizes it.

Which wire: our `initialize` control request, or the CLI's `system/init`.

What corral sent, replayed:
- a `user` frame is a prompt: a `PromptSent` (its text blocks, the line's
  time), and the protocol starts the turn under the recorded uuid (so the
  CLI's lifecycle and result frames name it);
- our control requests (`initialize`, `interrupt`, `set_model`,
  `set_permission_mode`, `apply_flag_settings`) go through the protocol,
  which then awaits their response; the ids it mints are mapped to the
  recorded ones, so each recorded response finds its request (a
  `get_usage` the protocol asks by itself after a result is mapped the
  same way). A recorded `rewind_files` is not replayed: its response is
  an unknown frame, as the fork that followed it live is a new process;
- our answer to a `can_use_tool` settles the request (the CLI's echo of
  it is then known) and is the app's answer (allow, with the rules to keep
  for "always", or deny; a withdrawal's deny is nobody's answer); to an
  `AskUserQuestion`, the labels written under each question's text are
  the choices made (or the free text).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...pipeline.driver import (
    AnswerSent,
    Configure,
    DriverCommand,
    Interrupt,
    PromptSent,
    ReplayItem,
    RequestAsked,
    StartTurn,
    Withdraw,
)
from ...pipeline.events import (
    ChoicesAnswer,
    PermissionChoice,
    QuestionAnswer,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
)
from .._recorded_wire import answered, block_text, read_recorded_wire, recorded
from ._core import new_uuid
from ._json import field_obj
from ._protocol import ClaudeProtocol
from ._requests import WITHDRAWN_MESSAGE
from ._usage import USAGE_REQUEST

__all__ = ["read_claude_wire", "recognizes_claude_wire_line"]


def recognizes_claude_wire_line(value: Mapping[str, Any], path: Path) -> bool:
    """One recorded line of Claude Code's start: our `initialize`, or the CLI's `system/init`."""
    sent, received = recorded(value, "out"), recorded(value, "in")
    if sent is not None and sent.get("type") == "control_request":
        request = sent.get("request")
        return isinstance(request, dict) and request.get("subtype") == "initialize"
    if received is not None:
        return received.get("type") == "system" and received.get("subtype") == "init"
    return False


def _text(message: Mapping[str, Any]) -> str:
    body = message.get("message")
    return block_text(body.get("content") if isinstance(body, dict) else None)


def _command(body: Mapping[str, Any]) -> DriverCommand | None:
    """The engine's command that wrote one of our control requests."""
    match body.get("subtype"):
        case "interrupt":
            return Interrupt(turn_id="")
        case "set_model" if isinstance(body.get("model"), str):
            return Configure(option="model", value=body["model"])
        case "set_permission_mode" if isinstance(body.get("mode"), str):
            return Configure(option="mode", value=body["mode"])
        case "apply_flag_settings" if isinstance(settings := body.get("settings"), dict):
            effort = settings.get("effortLevel")
            return Configure(
                option="effort", value=effort if isinstance(effort, str) else "default"
            )
    return None


def _choice(payload: Mapping[str, Any]) -> PermissionChoice | None:
    """What the app chose, from corral's `can_use_tool` answer (None: withdrawn)."""
    if payload.get("behavior") == "allow":
        always = "updatedPermissions" in payload
        return PermissionChoice.ALLOW_ALWAYS if always else PermissionChoice.ALLOW_ONCE
    if payload.get("behavior") == "deny" and payload.get("message") != WITHDRAWN_MESSAGE:
        return PermissionChoice.DENY_ONCE  # DenyAlways writes the same
    return None


def _questions_answer(request: QuestionRequest, given: Mapping[str, Any]) -> QuestionsAnswer:
    """The app's answers, from what corral wrote under each question's text (its labels)."""
    answers: list[QuestionAnswer] = []
    for question in request.questions:
        text = str(given.get(question.text, ""))
        ids = {choice.label: choice.id for choice in question.choices}
        labels = text.split(", ") if question.multi_select else [text]
        if all(label in ids for label in labels):
            answers.append(ChoicesAnswer(tuple(ids[label] for label in labels)))
        else:
            answers.append(TextAnswer(text))
    return QuestionsAnswer(tuple(answers))


def _request_ids(data: bytes) -> list[str]:
    """The ids of the control requests in bytes the protocol wrote."""
    ids = []
    for line in data.split(b"\n"):
        if line.strip():
            frame = orjson.loads(line)
            if frame.get("type") == "control_request":
                ids.append(str(frame.get("request_id")))
    return ids


class _ClaudeWire:
    """A recorded stream-json wire through `ClaudeProtocol` (a `RecordedWire`)."""

    wire = "a tagged Claude Code line"
    raw_key = "claude/raw_line"

    def __init__(self) -> None:
        self._uuids: deque[str] = deque()  # the recorded prompt's uuid, for the protocol
        self._protocol = ClaudeProtocol(new_id=self._next_uuid)
        self._minted: deque[str] = deque()  # ids of the protocol's requests, not yet mapped
        self._ids: dict[str, str] = {}  # a recorded request id -> the protocol's
        self._questions: dict[str, QuestionRequest] = {}  # AskUserQuestion, until answered

    def _next_uuid(self) -> str:
        return self._uuids.popleft() if self._uuids else new_uuid()

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]:
        kind = message.get("type")
        if kind == "user":
            uuid, text = message.get("uuid"), _text(message)
            if isinstance(uuid, str):
                self._uuids.append(uuid)
            _, events = self._protocol.send(StartTurn(turn_id="", prompt_id="", text=text))
            return [PromptSent(text=text, at_ns=at_ns), *events]
        if kind == "control_response":  # our answer to one of the CLI's requests
            return self._answer(field_obj(message, "response"))
        if kind == "control_request" and isinstance(body := message.get("request"), dict):
            return self._control(str(message.get("request_id")), body)
        return []

    def _answer(self, response: Mapping[str, Any]) -> list[ReplayItem]:
        request_id, payload = response.get("request_id"), field_obj(response, "response")
        if not isinstance(request_id, str):
            return []
        self._protocol.send(Withdraw(request_id))  # settled: the CLI's echo of it is known
        question = self._questions.pop(request_id, None)
        given = field_obj(payload, "updatedInput").get("answers")
        if question is not None and isinstance(given, dict) and payload.get("behavior") == "allow":
            return [AnswerSent(request_id=request_id, answer=_questions_answer(question, given))]
        return answered(request_id, _choice(payload))

    def _control(self, recorded_id: str, body: Mapping[str, Any]) -> list[ReplayItem]:
        events: list[ReplayItem] = []
        if body.get("subtype") == "initialize":
            self._minted += _request_ids(self._protocol.initialize())
        elif (command := _command(body)) is not None:
            data, verdicts = self._protocol.send(command)
            self._minted += _request_ids(data)
            events += verdicts
        elif body.get("subtype") != USAGE_REQUEST["subtype"]:
            return events  # not replayed (a rewind): its response is an unknown frame
        if self._minted:  # the one just replayed, or the usage read the protocol asked
            self._ids[recorded_id] = self._minted.popleft()
        return events

    def received(self, message: dict[str, Any]) -> list[ReplayItem]:
        response = message.get("response")
        if message.get("type") == "control_response" and isinstance(response, dict):
            mapped = self._ids.pop(str(response.get("request_id")), None)
            if mapped is not None:
                message = {**message, "response": {**response, "request_id": mapped}}
        events = self._protocol.receive(message)
        self._minted += _request_ids(self._protocol.data_to_send())
        for event in events:
            if isinstance(event, RequestAsked) and isinstance(event.request, QuestionRequest):
                self._questions[event.request.id] = event.request
        return list(events)

    def end(self) -> list[ReplayItem]:
        return list(self._protocol.end())


def read_claude_wire(path: Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    return read_recorded_wire(path, _ClaudeWire())
