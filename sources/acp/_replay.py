"""A recorded ACP wire, replayed into driver events (sans-IO).

A recording is JSON lines, one message each, tagged with its direction:
`{"out": <what corral sent>}` or `{"in": <what the agent sent>}` (the
shape corral's telemetry `wire_line` hook sees). `AcpReplay.feed(bytes)`
returns the `DriverEvent`s the live driver would have produced from the
same messages, through the same `Translator`: an outgoing
`session/prompt` is the turn's `TurnBegan`; the agent's answer to it ends
the turn; `session/new` / `session/load` answers set up the settings, and
a confirmed set call (`session/set_mode`, `session/set_model`,
`session/set_config_option`) is the live driver's `ConfigApplied`;
the agent's requests become requests (a recorded file read is a Read
request, as live; a recorded file write shows no old text: replay reads no
files; a recorded `elicitation/create` is a Question request (or the decline);
a recorded `terminal/create` is judged as
live, a grant or an Execute request, but nothing is run, and the other
`terminal/*` calls need no events).

Bytes may arrive in any split (whole, byte by byte); lines are split on
`\\n` only. A line that is not a tagged JSON-RPC message becomes a Warning
Diagnostic with `corral/decode_error`; replay never stops on bad input.
"""

from __future__ import annotations

from typing import Any

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ...pipeline.driver import ConfigRefused, DriverEvent, Emitted
from .._kit.problems import ProblemKind, WireProblem
from ._fs import Judged
from ._settings import Settings
from ._terminal import recorded_spec
from ._translate import Translator

__all__ = ["AcpReplay"]

_SESSION_METHODS = frozenset({"session/new", "session/load", "session/resume"})
# our set calls, by method: the param naming the option (None: it names itself) and the value's
_SET_CALLS = {
    "session/set_mode": ("mode", "modeId"),
    "session/set_model": ("model", "modelId"),
    "session/set_config_option": (None, "value"),
}
_SERVED = frozenset(
    {
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    }
)


def _problem(problem: WireProblem) -> Emitted:
    return problem.event(speaker="the recording", wire="a tagged ACP line", raw_key="acp/raw_line")


class AcpReplay:
    def __init__(self, *, max_line: int = 64 * 1024 * 1024) -> None:
        self._lines = JsonLinesDecoder(max_line=max_line)
        self.translator = Translator()
        self._sent: dict[Any, str] = {}  # our request id -> method
        self._setting: dict[Any, tuple[str, Any]] = {}  # our set call's id -> (option, value)

    def feed(self, chunk: bytes) -> list[DriverEvent]:
        return self._replay(self._lines.feed(chunk))

    def end(self) -> list[DriverEvent]:
        return self._replay(self._lines.end())

    def _replay(self, items: list[dict[str, Any] | NotJson | Oversized]) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for item in items:
            if not isinstance(item, dict):  # the decoder's NotJson or Oversized
                events.append(_problem(WireProblem.from_decoder(item)))
            elif isinstance(ours := item.get("out"), dict):
                events += self.sent(ours)
            elif isinstance(theirs := item.get("in"), dict):
                events += self.received(theirs)
            else:
                problem = WireProblem(
                    kind=ProblemKind.BAD_SHAPE,
                    reason="a recorded line without in/out",
                    raw=str(item)[:200],
                )
                events.append(_problem(problem))
        return events

    def sent(self, message: dict[str, Any]) -> list[DriverEvent]:
        """One message corral sent (the `out` of a recorded line)."""
        method = message.get("method")
        if not isinstance(method, str):
            if "result" in message or "error" in message:  # our answer to the agent
                self.translator.asks.recorded_answer(message.get("id"), message.get("result"))
            return []
        if message.get("id") is None:
            return []  # our notifications (cancel)
        self._sent[message["id"]] = method
        self._remember_set_call(message["id"], method, message.get("params"))
        return self.translator.turn_began() if method == "session/prompt" else []

    def received(self, message: dict[str, Any]) -> list[DriverEvent]:
        """One message the agent sent (the `in` of a recorded line)."""
        method = message.get("method")
        params = message.get("params")
        if isinstance(method, str):
            if message.get("id") is None:
                return self.translator.notification(method, params)
            return self._request(message["id"], method, params if isinstance(params, dict) else {})
        sent = self._sent.pop(message.get("id"), None)
        setting = self._setting.pop(message.get("id"), None)
        error = message.get("error")
        if setting is not None and "result" in message:  # the agent confirmed a configure
            return self.translator.settings.applied(*setting, message["result"])
        if setting is not None and isinstance(error, dict):
            reason = str(error.get("message", ""))
            return [ConfigRefused(option=setting[0], reason=reason)]
        if sent == "session/prompt":
            if isinstance(error, dict):
                return self.translator.prompt_failed(
                    int(error.get("code", -32603)), str(error.get("message", ""))
                )
            return self.translator.prompt_done(message.get("result"))
        if sent in _SESSION_METHODS and isinstance(message.get("result"), dict):
            self.translator.settings = Settings.from_session(message["result"])
        return []

    def _remember_set_call(self, rpc_id: Any, method: str, params: object) -> None:
        """A recorded `configure` (`session/set_mode`, `set_model`, `set_config_option`)."""
        if method not in _SET_CALLS or not isinstance(params, dict):
            return
        fixed, value_key = _SET_CALLS[method]
        option = fixed if fixed is not None else params.get("configId")
        value = params.get(value_key)
        if isinstance(option, str) and isinstance(value, str | bool):
            self._setting[rpc_id] = (option, value)

    def _request(self, rpc_id: Any, method: str, params: dict[str, Any]) -> list[DriverEvent]:
        asks = self.translator.asks
        if method == "session/request_permission":
            return asks.permission(rpc_id, params)
        if method == "fs/write_text_file":
            path, content = params.get("path"), params.get("content")
            if isinstance(path, str) and isinstance(content, str):
                return asks.write(rpc_id, path=path, content=content, old_text=None)
        if method == "fs/read_text_file" and isinstance(path := params.get("path"), str):
            return asks.read(rpc_id, Judged(path=path, file=None), line=None, limit=None)
        if method == "terminal/create" and (spec := recorded_spec(params)) is not None:
            decision = asks.command(rpc_id, spec)
            return decision if isinstance(decision, list) else []
        if method == "elicitation/create":
            asked = asks.elicitation(rpc_id, params)
            return (
                asked
                if isinstance(asked, list)
                else self.translator.declined(method, params, asked.warning)
            )
        if method in _SERVED:
            return []
        return self.translator.unsupported(method, params)
