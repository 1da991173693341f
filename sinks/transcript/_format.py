"""The transcript file format: one JSON object per line, append-only.

A transcript is one file per session (plus gzip parts once it rotates).
Each line is exactly one record, ending in `\\n`:

    {"transcript": {...}}                 header: first line of every part
    {"event": Event}                      a normalized event, as the line protocol writes it
    {"prompt": {...}}                     the text of a prompt the user sent
    {"decision": {...}}                   how a request ended (who decided, how long it waited)
    {"session": id, "error": ErrorBody}   the session's error, as the line protocol writes it
    {"repair": {...}}                     written when a torn last line was cut on reopen
    {"footer": {...}}                     last line: end reason and counts

Event and session-error lines have the line protocol's own shape, so a
transcript replays through the line writer unchanged. Any record may carry
`"redacted": {"count": n, "patterns": [...]}`: secrets were replaced in it.

Reading is strict about what it does not know: an unknown record, a line
that is not JSON or an event that does not parse is reported as damage
with its line number, never skipped in silence.
"""

from __future__ import annotations

from typing import Any

import attrs

from ...pipeline.errors import CorralError
from ...pipeline.events import Event, ShapeError, SystemTime
from ...pipeline.records import Closed, Decision, Opened, Prompted, SessionFailed

__all__ = [
    "FORMAT_VERSION",
    "DecisionRecord",
    "ErrorRecord",
    "EventRecord",
    "Footer",
    "Header",
    "PromptRecord",
    "Record",
    "RepairRecord",
    "decode_record",
    "encode_item",
    "footer_record",
    "header_record",
]

FORMAT_VERSION = 1

Json = dict[str, Any]


def _time(raw: object) -> SystemTime:
    try:
        return SystemTime.from_wire(raw, "")
    except ShapeError:
        return SystemTime(0, 0)


# ---- writing -----------------------------------------------------------------


def header_record(
    *,
    opened: Opened,
    transcript_id: str,
    corral_version: str,
    part: int = 0,
    redaction: bool = True,
    source: Json | None = None,
) -> Json:
    info = opened.info
    return {
        "transcript": {
            "format": FORMAT_VERSION,
            "corral": corral_version,
            "id": transcript_id,
            "part": part,
            "agent": info.agent.id,
            "installation": info.agent.to_wire(),
            "session": info.to_wire(),
            "dir": opened.dir,
            "started_at": opened.at.to_wire(),
            "redaction": redaction,
            "source": source if source is not None else {"kind": "live"},
        }
    }


def _decision(decision: Decision) -> Json:
    return {
        **decision.to_wire(),
        "session_id": decision.session_id,
        "agent": decision.agent,
        "turn_id": decision.turn_id,
        "at": decision.at.to_wire(),
    }


def encode_item(item: Event | Decision | SessionFailed | Prompted) -> Json:
    """The record of one sink item (not `Opened`/`Closed`: header and footer).

    A live session's prompts and an imported one's are the same `Prompted`
    record (the replay runner emits it too).
    """
    match item:
        case Event():
            return {"event": item.to_wire()}
        case Decision():
            return {"decision": _decision(item)}
        case SessionFailed(session_id=session_id, error=error):
            return {"session": session_id, "error": error.body()}
        case Prompted():
            return {
                "prompt": {
                    "session_id": item.session_id,
                    "prompt_id": item.prompt_id,
                    "text": item.text,
                    "attachments": list(item.attachments),
                    "at": item.at.to_wire(),
                }
            }


def footer_record(
    closed: Closed | None, *, counts: Json, ended_at: SystemTime, reason: str | None = None
) -> Json:
    body: Json = {
        "session": None if closed is None else closed.session_id,
        "reason": reason if reason is not None else ("closed" if closed is None else closed.reason),
        "ended_at": ended_at.to_wire(),
        **counts,
    }
    if closed is not None:
        body["turns"] = closed.turns
    return {"footer": body}


# ---- reading -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Header:
    transcript_id: str
    format: int
    corral: str
    part: int
    agent: str
    session: Json  # SessionInfo as the line protocol writes it
    installation: Json
    dir: str
    started_at: SystemTime
    redaction: bool
    source: Json

    @property
    def session_id(self) -> str:
        return str(self.session.get("id", ""))

    @property
    def title(self) -> str | None:
        title = self.session.get("title")
        return title if isinstance(title, str) else None


@attrs.frozen(kw_only=True)
class EventRecord:
    event: Event
    raw: Json  # the `event` object exactly as stored


@attrs.frozen(kw_only=True)
class PromptRecord:
    prompt_id: str
    text: str
    attachments: tuple[str, ...]
    at: SystemTime


@attrs.frozen(kw_only=True)
class DecisionRecord:
    request_id: str
    decision: str
    decided_by: str
    waited_seconds: float
    request_kind: str
    tool_kind: str | None
    turn_id: str | None
    at: SystemTime


@attrs.frozen(kw_only=True)
class ErrorRecord:
    session_id: str
    error: CorralError
    raw: Json


@attrs.frozen(kw_only=True)
class RepairRecord:
    cut_bytes: int
    torn_lines: int
    at: SystemTime


@attrs.frozen(kw_only=True)
class Footer:
    reason: str
    ended_at: SystemTime
    raw: Json

    def count(self, name: str) -> int:
        value = self.raw.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


Record = Header | EventRecord | PromptRecord | DecisionRecord | ErrorRecord | RepairRecord | Footer


def _header(body: Json) -> Header:
    return Header(
        transcript_id=str(body["id"]),
        format=int(body["format"]),
        corral=str(body.get("corral", "")),
        part=int(body.get("part", 0)),
        agent=str(body.get("agent", "")),
        session=dict(body.get("session") or {}),
        installation=dict(body.get("installation") or {}),
        dir=str(body.get("dir", "")),
        started_at=_time(body.get("started_at")),
        redaction=bool(body.get("redaction", False)),
        source=dict(body.get("source") or {}),
    )


def _decision_record(body: Json) -> DecisionRecord:
    return DecisionRecord(
        request_id=str(body["request_id"]),
        decision=str(body["decision"]),
        decided_by=str(body["decided_by"]),
        waited_seconds=float(body.get("waited_seconds") or 0.0),
        request_kind=str(body.get("request_kind", "Permission")),
        tool_kind=body.get("tool_kind"),
        turn_id=body.get("turn_id"),
        at=_time(body.get("at")),
    )


def decode_record(raw: object) -> Record:
    """One decoded line as a typed record; ValueError (with why) when it is none."""
    if not isinstance(raw, dict):
        raise ValueError("a record is a JSON object")
    try:
        if "event" in raw:
            return EventRecord(event=Event.from_wire(raw["event"]), raw=raw["event"])
        if "prompt" in raw:
            body = raw["prompt"]
            return PromptRecord(
                prompt_id=str(body["prompt_id"]),
                text=str(body["text"]),
                attachments=tuple(str(a) for a in body.get("attachments") or ()),
                at=_time(body.get("at")),
            )
        if "decision" in raw:
            return _decision_record(raw["decision"])
        if "session" in raw and "error" in raw:
            body = dict(raw["error"])
            return ErrorRecord(
                session_id=str(raw["session"]), error=CorralError.from_body(body), raw=body
            )
        if "transcript" in raw:
            return _header(raw["transcript"])
        if "footer" in raw:
            body = raw["footer"]
            return Footer(
                reason=str(body["reason"]), ended_at=_time(body.get("ended_at")), raw=body
            )
        if "repair" in raw:
            body = raw["repair"]
            return RepairRecord(
                cut_bytes=int(body["cut_bytes"]),
                torn_lines=int(body["torn_lines"]),
                at=_time(body.get("at")),
            )
    except (KeyError, TypeError) as error:
        raise ValueError(f"incomplete record: {error!r}") from None
    keys = ", ".join(sorted(raw)) or "none"
    raise ValueError(f"unknown record (keys: {keys})")
