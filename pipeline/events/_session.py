"""A live session as the app sees it: info, status, configuration, quota.

`SessionInfo` is the snapshot `open` and `info` return and `SessionUpdated`
carries; `Delivery` is what `prompt` answers at once.
"""

from __future__ import annotations

import enum

import attrs

from ._config import ConfigValue, config_value_from_wire
from ._details import AgentDetails
from ._discovery import AgentInstallation
from ._shape import Fields, ShapeError, tag_of

__all__ = [
    "Delivery",
    "PlanUsage",
    "Queued",
    "SessionInfo",
    "SessionStatus",
    "Started",
    "Steered",
    "SystemTime",
    "UsageWindow",
]


@attrs.frozen
class SystemTime:
    """Wall-clock time as the schema writes it (seconds + nanoseconds)."""

    secs: int
    nanos: int = 0

    @classmethod
    def from_ns(cls, ns: int) -> SystemTime:
        secs, nanos = divmod(ns, 1_000_000_000)
        return cls(secs, nanos)

    @property
    def seconds(self) -> float:
        return self.secs + self.nanos / 1e9

    def to_wire(self) -> dict[str, int]:
        return {"secs_since_epoch": self.secs, "nanos_since_epoch": self.nanos}

    @classmethod
    def from_wire(cls, raw: object, path: str) -> SystemTime:
        fields = Fields(raw, path)
        return cls(fields.integer("secs_since_epoch"), fields.integer("nanos_since_epoch"))


class SessionStatus(enum.StrEnum):
    IDLE = "Idle"
    WORKING = "Working"
    NEEDS_INPUT = "NeedsInput"


_STATUSES = {status.value: status for status in SessionStatus}


@attrs.frozen(kw_only=True)
class SessionInfo:
    id: str
    agent: AgentInstallation
    details: AgentDetails
    options: tuple[tuple[str, ConfigValue], ...] = ()  # the SessionConfiguration
    resume_token: str | None = None
    title: str | None = None
    status: SessionStatus = SessionStatus.IDLE

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "agent": self.agent.to_wire(),
            "details": self.details.to_wire(),
            "configuration": {"options": dict(self.options)},
            "resume_token": self.resume_token,
            "title": self.title,
            "status": self.status.value,
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> SessionInfo:
        fields = Fields(raw, path)
        options = fields.obj("configuration").obj("options")
        return cls(
            id=fields.string("id"),
            agent=AgentInstallation.from_wire(fields.value("agent"), f"{path}.agent"),
            details=AgentDetails.from_wire(fields.value("details"), f"{path}.details"),
            options=tuple(
                (name, config_value_from_wire(value, f"{options.path}.{name}"))
                for name, value in options.raw.items()
            ),
            resume_token=fields.opt_string("resume_token"),
            title=fields.opt_string("title"),
            status=fields.choice("status", _STATUSES)
            if fields.has("status")
            else SessionStatus.IDLE,
        )


@attrs.frozen(kw_only=True)
class UsageWindow:
    label: str
    used_percent: int
    resets_at: SystemTime | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "label": self.label,
            "used_percent": self.used_percent,
            "resets_at": None if self.resets_at is None else self.resets_at.to_wire(),
        }


@attrs.frozen(kw_only=True)
class PlanUsage:
    windows: tuple[UsageWindow, ...]
    fetched_at: SystemTime
    plan: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "plan": self.plan,
            "windows": [window.to_wire() for window in self.windows],
            "fetched_at": self.fetched_at.to_wire(),
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> PlanUsage:
        fields = Fields(raw, path)
        windows = []
        for item_path, item in fields.array("windows"):
            window = Fields(item, item_path)
            resets = window.opt_obj("resets_at")
            used = window.integer("used_percent")
            if used > 255:
                window.fail("used_percent", "must be at most 255")
            windows.append(
                UsageWindow(
                    label=window.string("label"),
                    used_percent=used,
                    resets_at=None if resets is None else SystemTime.from_wire(resets.raw, ""),
                )
            )
        return cls(
            plan=fields.opt_string("plan"),
            windows=tuple(windows),
            fetched_at=SystemTime.from_wire(fields.value("fetched_at"), f"{path}.fetched_at"),
        )


@attrs.frozen
class Started:
    turn_id: str


@attrs.frozen
class Steered:
    turn_id: str


@attrs.frozen
class Queued:
    position: int  # prompts ahead of this one


@attrs.frozen(kw_only=True)
class Delivery:
    """What `prompt` answers: the prompt id and where the prompt went."""

    prompt_id: str
    kind: Started | Steered | Queued

    def to_wire(self) -> dict[str, object]:
        kind: object
        match self.kind:
            case Started(turn_id=turn_id):
                kind = {"Started": {"turn_id": turn_id}}
            case Steered(turn_id=turn_id):
                kind = {"Steered": {"turn_id": turn_id}}
            case Queued(position=position):
                kind = {"Queued": {"position": position}}
        return {"prompt_id": self.prompt_id, "kind": kind}

    @classmethod
    def from_wire(cls, raw: object, path: str) -> Delivery:
        fields = Fields(raw, path)
        tag, payload = tag_of(fields.value("kind"), f"{path}.kind")
        body = Fields(payload, f"{path}.kind.{tag}")
        kind: Started | Steered | Queued
        if tag == "Started":
            kind = Started(body.string("turn_id"))
        elif tag == "Steered":
            kind = Steered(body.string("turn_id"))
        elif tag == "Queued":
            kind = Queued(body.integer("position"))
        else:
            raise ShapeError(f"{path}.kind", f"unknown delivery {tag!r}")
        return cls(prompt_id=fields.string("prompt_id"), kind=kind)
