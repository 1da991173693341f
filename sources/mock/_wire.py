"""The mock agent's wire, for its process mode: driver messages as JSON lines.

Parent → child: one `DriverCommand` per line, externally tagged
(`{"StartTurn": {...}}`), after a first `{"Script": {...}}` line. Child →
parent: one `DriverEvent` per line (`{"Emitted": {"kind": EventKind}}`,
`{"TurnFinished": {"stop": StopReason}}`, ...). Sans-IO: values in, values
out; `decode_event` raises `ShapeError` for anything else.
"""

from __future__ import annotations

from typing import Any

from ...pipeline import driver
from ...pipeline.commands import RollbackScope
from ...pipeline.events import (
    Fields,
    ShapeError,
    TextDelta,
    answer_from_wire,
    config_value_from_wire,
    kind_from_wire,
    request_from_wire,
    stop_from_wire,
    stop_to_wire,
    tag_of,
    text_delta_parts,
)
from .._kit.quick import text_emitter

__all__ = ["decode_command", "decode_event", "encode_command", "encode_event"]

_text = text_emitter(TextDelta)


def encode_command(command: driver.DriverCommand) -> dict[str, Any]:
    match command:
        case driver.StartTurn() | driver.SteerTurn():
            body = {
                "turn_id": command.turn_id,
                "prompt_id": command.prompt_id,
                "text": command.text,
                "attachments": list(command.attachments),
            }
            return {type(command).__name__: body}
        case driver.Interrupt(turn_id=turn_id):
            return {"Interrupt": {"turn_id": turn_id}}
        case driver.Respond(request_id=request_id, answer=answer, message=message):
            return {
                "Respond": {
                    "request_id": request_id,
                    "answer": answer.to_wire(),
                    "message": message,
                }
            }
        case driver.Withdraw(request_id=request_id):
            return {"Withdraw": {"request_id": request_id}}
        case driver.Configure(option=option, value=value):
            return {"Configure": {"option": option, "value": value}}
        case driver.Rollback(turns=turns, scope=scope):
            return {"Rollback": {"turns": turns, "scope": scope.value}}
        case driver.Compact():
            return {"Compact": {}}


def decode_command(raw: object) -> driver.DriverCommand:
    tag, payload = tag_of(raw, "command")
    f = Fields(payload, tag)
    match tag:
        case "StartTurn" | "SteerTurn":
            cls = driver.StartTurn if tag == "StartTurn" else driver.SteerTurn
            return cls(
                turn_id=f.string("turn_id"),
                prompt_id=f.string("prompt_id"),
                text=f.string("text"),
                attachments=f.strings("attachments", True),
            )
        case "Interrupt":
            return driver.Interrupt(f.string("turn_id"))
        case "Respond":
            return driver.Respond(
                request_id=f.string("request_id"),
                answer=answer_from_wire(f.value("answer"), "Respond.answer"),
                message=f.opt_string("message"),
            )
        case "Withdraw":
            return driver.Withdraw(f.string("request_id"))
        case "Configure":
            return driver.Configure(
                option=f.string("option"),
                value=config_value_from_wire(f.value("value"), "Configure.value"),
            )
        case "Rollback":
            return driver.Rollback(
                turns=f.integer("turns"),
                scope=f.choice("scope", {s.value: s for s in RollbackScope}),
            )
        case "Compact":
            return driver.Compact()
    raise ShapeError(tag, "unknown command")


def encode_event(event: driver.DriverEvent) -> dict[str, Any]:
    match event:
        case driver.TurnBegan():
            return {"TurnBegan": {}}
        case driver.Emitted(kind=kind, parent_tool_id=parent, extensions=extensions):
            body = {"kind": kind.to_wire(), "parent_tool_id": parent, "extensions": extensions}
            if event.tokens is not None:
                body["tokens"] = event.tokens.counts()
            if event.model is not None:
                body["model"] = event.model
            return {"Emitted": body}
        case driver.TurnFinished(stop=stop):
            return {"TurnFinished": {"stop": stop_to_wire(stop)}}
        case driver.RequestAsked(request=request):
            return {"RequestAsked": {"request": request.to_wire()}}
        case driver.SteerVerdict(prompt_id=prompt_id, accepted=accepted, reason=reason):
            return {
                "SteerVerdict": {"prompt_id": prompt_id, "accepted": accepted, "reason": reason}
            }
        case driver.ConfigApplied(option=option, value=value):
            return {"ConfigApplied": {"option": option, "value": value}}
        case driver.ConfigRefused(option=option, reason=reason):
            return {"ConfigRefused": {"option": option, "reason": reason}}
        case driver.RollbackVerdict(accepted=accepted, reason=reason):
            return {"RollbackVerdict": {"accepted": accepted, "reason": reason}}
    raise ValueError(f"the mock wire does not carry {type(event).__name__}")


def decode_event(raw: object) -> driver.DriverEvent:
    # Fast path for the commonest line, an event with no parent and no
    # extensions; any doubt about its shape falls through to the checks below.
    emitted = raw.get("Emitted") if type(raw) is dict and len(raw) == 1 else None
    if (
        type(emitted) is dict
        and "kind" in emitted
        and emitted.get("parent_tool_id") is None
        and emitted.get("extensions") in (None, {})
        and "tokens" not in emitted
        and "model" not in emitted
    ):
        kind = emitted["kind"]
        if (parts := text_delta_parts(kind)) is not None:
            return _text(*parts)  # the bulk of a stream, built through the slots
        return driver.Emitted(kind=kind_from_wire(kind, "Emitted.kind"))
    tag, payload = tag_of(raw, "event")
    f = Fields(payload, tag)
    match tag:
        case "TurnBegan":
            return driver.TurnBegan()
        case "Emitted":
            extensions = f.opt_obj("extensions")
            tokens = f.opt_obj("tokens")
            return driver.Emitted(
                kind=kind_from_wire(f.value("kind"), "Emitted.kind"),
                parent_tool_id=f.opt_string("parent_tool_id"),
                tokens=None if tokens is None else driver.TokenCount.from_counts(tokens.raw),
                model=f.opt_string("model"),
                extensions={} if extensions is None else extensions.raw,
            )
        case "TurnFinished":
            return driver.TurnFinished(stop=stop_from_wire(f.value("stop"), "TurnFinished.stop"))
        case "RequestAsked":
            return driver.RequestAsked(
                request=request_from_wire(f.value("request"), "RequestAsked")
            )
        case "SteerVerdict":
            return driver.SteerVerdict(
                prompt_id=f.string("prompt_id"),
                accepted=f.flag("accepted"),
                reason=f.opt_string("reason"),
            )
        case "ConfigApplied":
            return driver.ConfigApplied(
                option=f.string("option"),
                value=config_value_from_wire(f.value("value"), "ConfigApplied.value"),
            )
        case "ConfigRefused":
            return driver.ConfigRefused(option=f.string("option"), reason=f.string("reason"))
        case "RollbackVerdict":
            return driver.RollbackVerdict(
                accepted=f.flag("accepted"), reason=f.opt_string("reason")
            )
    raise ShapeError(tag, f"unknown mock event {tag!r}")
