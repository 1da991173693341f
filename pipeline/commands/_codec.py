"""Commands to and from the wire: one reader per `cmd` name, one writer per class.

`command_from_wire` looks the `cmd` tag up in `_READERS` and reads the rest of
the object with it, raising `ShapeError` naming the bad field;
`command_to_wire` is its inverse and writes the canonical form (optional
fields at their default left out). `Frame` is one whole line from the app.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ..events import Fields, answer_from_wire, config_value_from_wire
from ._commands import (
    AnswerCmd,
    CancelCmd,
    CloseCmd,
    Command,
    CompactCmd,
    ConfigureCmd,
    DequeueCmd,
    DiscoverCmd,
    GenerateCmd,
    InfoCmd,
    OpenCmd,
    PlanUsageCmd,
    ProbeCmd,
    PromptCmd,
    RollbackCmd,
    RollbackScope,
)
from ._options import SessionOptions, agent_ref_from_wire, agent_ref_to_wire

__all__ = ["COMMAND_NAMES", "Frame", "command_from_wire", "command_to_wire"]


def _rollback(f: Fields) -> RollbackCmd:
    turns = f.integer("turns", minimum=1)
    return RollbackCmd(
        session=f.string("session"),
        turns=turns,
        scope=f.choice("scope", {s.value: s for s in RollbackScope}),
    )


_READERS: dict[str, Callable[[Fields], Command]] = {
    "discover": lambda f: DiscoverCmd(),
    "probe": lambda f: ProbeCmd(agent_ref_from_wire(f.value("agent"), "agent")),
    "plan_usage": lambda f: PlanUsageCmd(agent_ref_from_wire(f.value("agent"), "agent")),
    "open": lambda f: OpenCmd(SessionOptions.from_wire(f)),
    "generate": lambda f: GenerateCmd(
        options=SessionOptions.from_wire(f), prompt=f.string("prompt")
    ),
    "prompt": lambda f: PromptCmd(
        session=f.string("session"),
        text=f.string("text"),
        attachments=f.strings("attachments", True),
    ),
    "dequeue": lambda f: DequeueCmd(session=f.string("session"), prompt=f.string("prompt")),
    "answer": lambda f: AnswerCmd(
        session=f.string("session"),
        request=f.string("request"),
        answer=answer_from_wire(f.value("answer"), "answer"),
    ),
    "configure": lambda f: ConfigureCmd(
        session=f.string("session"),
        option=f.string("option"),
        value=config_value_from_wire(f.value("value"), "value"),
    ),
    "rollback": _rollback,
    "compact": lambda f: CompactCmd(f.string("session")),
    "cancel": lambda f: CancelCmd(
        session=f.string("session"), clear_queue=f.flag("clear_queue", False)
    ),
    "info": lambda f: InfoCmd(f.string("session")),
    "close": lambda f: CloseCmd(f.string("session")),
}

COMMAND_NAMES = frozenset(_READERS)


def command_from_wire(fields: Fields) -> Command:
    name = fields.string("cmd")
    reader = _READERS.get(name)
    if reader is None:
        fields.fail("cmd", f"unknown command {name!r}; expected one of {', '.join(_READERS)}")
    return reader(fields)


def command_to_wire(command: Command) -> dict[str, object]:
    """The `cmd`-tagged object of one command, in canonical form."""
    match command:
        case DiscoverCmd():
            return {"cmd": "discover"}
        case ProbeCmd(agent=agent):
            return {"cmd": "probe", "agent": agent_ref_to_wire(agent)}
        case PlanUsageCmd(agent=agent):
            return {"cmd": "plan_usage", "agent": agent_ref_to_wire(agent)}
        case OpenCmd(options=options):
            return {"cmd": "open", **options.to_wire()}
        case GenerateCmd(options=options, prompt=prompt):
            return {"cmd": "generate", **options.to_wire(), "prompt": prompt}
        case PromptCmd(session=sid, text=text, attachments=attachments):
            extra = {"attachments": list(attachments)} if attachments else {}
            return {"cmd": "prompt", "session": sid, "text": text, **extra}
        case DequeueCmd(session=sid, prompt=prompt_id):
            return {"cmd": "dequeue", "session": sid, "prompt": prompt_id}
        case AnswerCmd(session=sid, request=request_id, answer=answer):
            return {
                "cmd": "answer",
                "session": sid,
                "request": request_id,
                "answer": answer.to_wire(),
            }
        case ConfigureCmd(session=sid, option=option, value=value):
            return {"cmd": "configure", "session": sid, "option": option, "value": value}
        case RollbackCmd(session=sid, turns=turns, scope=scope):
            return {"cmd": "rollback", "session": sid, "turns": turns, "scope": scope.value}
        case CancelCmd(session=sid, clear_queue=clear_queue):
            return {
                "cmd": "cancel",
                "session": sid,
                **({"clear_queue": True} if clear_queue else {}),
            }
        case CompactCmd(session=sid):
            return {"cmd": "compact", "session": sid}
        case InfoCmd(session=sid):
            return {"cmd": "info", "session": sid}
        case CloseCmd(session=sid):
            return {"cmd": "close", "session": sid}


@attrs.frozen
class Frame:
    """One line from the app: the id its reply will carry, and the command."""

    id: int
    command: Command

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, **command_to_wire(self.command)}

    @classmethod
    def from_wire(cls, raw: object) -> Frame:
        fields = Fields(raw)
        return cls(fields.integer("id"), command_from_wire(fields))
