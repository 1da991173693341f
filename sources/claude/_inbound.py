"""Frames from the CLI, one handler per frame type (see `_protocol.py`).

`receive` dispatches on `type`; a type with no handler is reported as an
unknown frame (an Info `Diagnostic` carrying the raw frame) unless it only
paces the CLI's own UI. Every handler first looks for the mark that our
prompt's turn began (`_begin`), then translates the frame.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from ...pipeline.driver import (
    ConfigApplied,
    DriverEvent,
    InfoChanged,
    ProblemKind,
    RequestAsked,
    RequestWithdrawn,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import Cancelled, Failed
from ...pipeline.framing import LineSplitter, Oversized
from ._controls import control_outcome
from ._core import ProtocolCore, Turn
from ._encode import control_error, encode
from ._json import field_obj
from ._requests import read_can_use_tool
from ._results import auth_failure, result_events
from ._system import QUIET_FRAMES, decode_problem, oversized, system_frame, unknown_frame

__all__ = ["InboundFrames"]

_ENDED_STATES = frozenset({"cancelled", "discarded", "refused"})


class InboundFrames(ProtocolCore):
    def feed(self, chunk: bytes) -> list[DriverEvent]:
        return self._lines_in(self._lines.feed(chunk))

    def end(self) -> list[DriverEvent]:
        events = self._lines_in(self._lines.end())
        self._lines = LineSplitter()
        return events

    def _lines_in(self, lines: Iterable[bytes | Oversized]) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for line in lines:
            if isinstance(line, Oversized):
                events.append(oversized(line))
            else:
                events.extend(self.receive_line(line))
        return events

    def receive_line(self, line: bytes) -> list[DriverEvent]:
        if not line.strip():
            return []
        try:
            frame = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            prefix = line[:200].decode("utf-8", "replace")
            return [decode_problem(prefix, f"not JSON: {error}", ProblemKind.NOT_JSON)]
        if not isinstance(frame, dict):
            prefix = line[:200].decode("utf-8", "replace")
            reason = "a JSON value that is not an object"
            return [decode_problem(prefix, reason, ProblemKind.BAD_SHAPE)]
        return self.receive(frame)

    def receive(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        kind = frame.get("type")
        if kind in ("user", "assistant") and _parent(frame) is None:
            entry = frame.get("uuid")
            if isinstance(entry, str) and entry:
                self.history.entry(entry)  # a chain entry of the conversation
        handler = _HANDLERS.get(str(kind))
        if handler is None:
            if isinstance(kind, str) and kind in QUIET_FRAMES:
                return []
            return [unknown_frame(frame, str(kind))]
        return handler(self, frame)

    def _on_stream_event(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        event = frame.get("event")
        parent = _parent(frame)
        events = self._begun_by(frame)
        handled = self.content.stream_event(event, parent) if isinstance(event, dict) else None
        if handled is None:
            name = f"stream_event/{event.get('type') if isinstance(event, dict) else None}"
            return [*events, unknown_frame(frame, name)]
        return events + handled if events else handled

    def _on_assistant(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        events = self._begun_by(frame)
        message = frame.get("message")
        if isinstance(message, dict):
            events.extend(self.content.assistant(message, _parent(frame)))
        failure = auth_failure(frame)
        return events if failure is None else [*events, failure]

    def _on_user(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        uid = frame.get("uuid")
        turn = self._turn
        if frame.get("isReplay") and (
            (turn is not None and uid == turn.uuid) or uid in self._ended
        ):
            return self._begin([uid])  # our own prompt, echoed back
        message = field_obj(frame, "message")
        return self.content.user(
            message.get("content"),
            frame.get("tool_use_result"),
            _parent(frame),
            str(uid or self._new_id()),
            meta=bool(frame.get("isMeta")),
        )

    def _on_result(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        mentioned = [u for u in self._mentions(frame) if isinstance(u, str)]
        turn = self._turn
        if turn is None:
            if self.initialized is None:
                self.startup_errors.extend(str(e) for e in frame.get("errors") or [])
                return []
            if mentioned and all(u in self._ended for u in mentioned):
                return []  # a turn we already ended (cancelled before it started)
            usage, stop, extensions = result_events(frame, self.content, interrupted=False)
            self.ask_plan_usage()
            return [*usage, TurnFinished(stop=stop, extensions=extensions)]
        if not turn.begun and mentioned and turn.uuid not in mentioned:
            return []  # not our prompt's result: ours has not started yet
        usage, stop, extensions = result_events(frame, self.content, turn.interrupting)
        began = self._begin([turn.uuid])
        self.ask_plan_usage()
        return began + usage + self._finish(stop, extensions)

    def _on_system(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        events = self._begun_by(frame)
        subtype = frame.get("subtype")
        if subtype == "init":
            return events + self._on_init(frame)
        if subtype == "compact_boundary":
            metadata = frame.get("compact_metadata")
            if isinstance(metadata, dict) and isinstance(metadata.get("post_tokens"), int):
                self.content.usage = {"input_tokens": metadata["post_tokens"]}
        if subtype == "status" and isinstance(frame.get("permissionMode"), str):
            events.extend(self._mode_seen(frame["permissionMode"]))
        handled = system_frame(frame)
        if handled is None:
            return [*events, unknown_frame(frame, f"system/{subtype}")]
        return events + handled

    def _on_init(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        model = frame.get("model")
        if isinstance(model, str) and model:
            self.content.model = self.content.model or model
        token = frame.get("session_id")
        if isinstance(token, str) and token and token != self.resume_token:
            self.resume_token = token
            return [InfoChanged(resume_token=token)]
        return []

    def _mode_seen(self, mode: str) -> list[DriverEvent]:
        if mode == self.mode or any(p.kind == "mode" for p in self._controls.values()):
            return []
        self.mode = mode  # the CLI changed its mode by itself (e.g. leaving plan mode)
        return [ConfigApplied(option="mode", value=mode)]

    def _on_lifecycle(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        command, state = frame.get("command_uuid"), frame.get("state")
        turn = self._turn
        if turn is None:
            if state == "started" and isinstance(command, str) and command not in self._ended:
                self._turn = Turn(command, begun=True)  # a turn the CLI started by itself
                return [TurnBegan()]
            return []
        if command != turn.uuid:
            return []
        if state == "started":
            return self._begin([command])
        if state in _ENDED_STATES:  # no result will come for it
            if state == "refused":
                return self._finish(Failed("Claude Code refused the prompt"))
            return self._finish(Cancelled())
        return []

    def _on_control_request(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        request_id, body = frame.get("request_id"), frame.get("request")
        if not isinstance(request_id, str) or not isinstance(body, dict):
            return [unknown_frame(frame, "control_request")]
        if body.get("subtype") != "can_use_tool":
            reply = control_error(request_id, f"corral does not serve {body.get('subtype')}")
            self._replies += encode(reply)
            return [unknown_frame(frame, f"control_request/{body.get('subtype')}")]
        tool_id = body.get("tool_use_id")
        known = self.content.tools.get(tool_id) if isinstance(tool_id, str) else None
        request, asked = read_can_use_tool(request_id, body, known)
        self._asked[request_id] = asked
        parent = self.content.parents.get(tool_id) if isinstance(tool_id, str) else None
        return [RequestAsked(request=request, parent_tool_id=parent)]

    def _on_cancel_request(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        request_id = frame.get("request_id")
        if isinstance(request_id, str) and self._asked.pop(request_id, None) is not None:
            return [RequestWithdrawn(request_id)]
        return []

    def _on_control_response(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        response = frame.get("response")
        request_id = response.get("request_id") if isinstance(response, dict) else None
        pending = self._controls.pop(request_id, None) if isinstance(request_id, str) else None
        if pending is None:
            if request_id in self._answered:
                return []  # the CLI echoing an answer of ours
            return [unknown_frame(frame, "control_response")]
        assert isinstance(response, dict)
        return control_outcome(self, pending.kind, pending.value, response)


def _parent(frame: Mapping[str, Any]) -> str | None:
    parent = frame.get("parent_tool_use_id")
    return parent if isinstance(parent, str) and parent else None


_HANDLERS: dict[str, Callable[[InboundFrames, Mapping[str, Any]], list[DriverEvent]]] = {
    "stream_event": InboundFrames._on_stream_event,
    "assistant": InboundFrames._on_assistant,
    "user": InboundFrames._on_user,
    "result": InboundFrames._on_result,
    "system": InboundFrames._on_system,
    "command_lifecycle": InboundFrames._on_lifecycle,
    "control_request": InboundFrames._on_control_request,
    "control_cancel_request": InboundFrames._on_cancel_request,
    "control_response": InboundFrames._on_control_response,
}
