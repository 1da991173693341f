"""Golden files for the Codex normalizers: feeding, describing, checking.

Inputs are the recordings of the real `codex app-server` and its rollouts
(`tests/fixtures/codex/record.py`) and the EventMsg frames built to the
seed schema (`tests/fixtures/codex/eventmsg/`). Each input has an
`<name>.expected.json` beside it: what the normalizer made of it, as
plain JSON (`describe`). Regenerate them after a deliberate change with

    .venv/bin/python -m tests.unit.codex.golden --update

and review the diff by hand.

Feeding: `appserver_events(data, chunk)` splits Codex's stdout bytes into
messages (`JsonLinesDecoder`), sets the thread id from the `thread/start`
answer as the driver does, and gives notifications and server requests to
an `AppServerNormalizer`; `chunk` is the size of the pieces the bytes
arrive in (0: all at once, 1: byte by byte). `rollout_items` does the
same for rollouts through `RolloutReader`. `run_engine` plays driver
events through a real engine and returns the events it emitted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corral.actors.engine import Engine
from corral.pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from corral.pipeline.driver import (
    AgentExited,
    ConfigApplied,
    ConfigRefused,
    Emitted,
    Handshake,
    InfoChanged,
    PromptSent,
    ReplayItem,
    RequestAsked,
    RequestWithdrawn,
    RollbackVerdict,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from corral.pipeline.events import (
    AgentInstallation,
    Event,
    EventKind,
    InstallationSource,
    RequestOpened,
    stop_to_wire,
)
from corral.pipeline.extensions import wire_extensions
from corral.sources.codex import AppServerNormalizer, EventMsgNormalizer, RolloutReader
from corral.sources.codex._catalog import details_for

from tests.support.schema import check

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "codex"
APPSERVER = FIXTURES / "appserver"
ROLLOUTS = FIXTURES / "rollouts"
EVENTMSG = FIXTURES / "eventmsg"
NOW_NS = 1_800_000_000_123_456_789


def recordings(folder: Path) -> list[str]:
    return sorted(
        p.stem
        for p in folder.glob("*.jsonl")
        if not p.name.endswith(".client.jsonl") and not p.name.endswith(".expected.json")
    )


def _extensions(extensions: dict[str, Any]) -> dict[str, Any]:
    return {k: ("<raw>" if k == "codex/raw_frame" else v) for k, v in extensions.items()}


def describe(item: ReplayItem | dict[str, Any]) -> object:
    """One output as plain JSON, for golden files."""
    match item:
        case TurnBegan():
            return "TurnBegan"
        case Emitted(kind=kind, parent_tool_id=parent):
            out: dict[str, Any] = {"Emitted": kind.to_wire()}
            if parent is not None:
                out["parent_tool_id"] = parent
            extensions = wire_extensions(item, None)  # as the app sees them
            if extensions:
                out["extensions"] = _extensions(extensions)
            return out
        case TurnFinished(stop=stop, extensions=extensions):
            return {"TurnFinished": stop_to_wire(stop), "extensions": extensions}
        case RequestAsked(request=request, extensions=extensions):
            return {"RequestAsked": request.to_wire(), "extensions": extensions}
        case RequestWithdrawn(request_id=request_id):
            return {"RequestWithdrawn": request_id}
        case InfoChanged(resume_token=token, title=title, config_options=options):
            changed: dict[str, object] = {"resume_token": token, "title": title}
            if options is not None:
                changed["config_options"] = [o.to_wire() for o in options]
            return {"InfoChanged": {k: v for k, v in changed.items() if v is not None}}
        case PromptSent(text=text, at_ns=at_ns):
            return {"PromptSent": text, "at_ns": at_ns}
        case SteerVerdict() | ConfigApplied() | ConfigRefused() | RollbackVerdict():
            return {type(item).__name__: repr(item)}
        case AgentExited() | WireFailed():
            return {type(item).__name__: repr(item)}
        case dict():
            return item  # a reply the normalizer wrote itself
    raise AssertionError(f"cannot describe {item!r}")


# ---- feeding -----------------------------------------------------------------------


def _chunks(data: bytes, chunk: int) -> Iterable[bytes]:
    if chunk <= 0:
        yield data
        return
    for start in range(0, len(data), chunk):
        yield data[start : start + chunk]


def our_prompts(client: bytes) -> list[tuple[str, str]]:
    """(clientUserMessageId, text) of every prompt and steer the client sent."""
    prompts = []
    for line in client.split(b"\n"):
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("method") in ("turn/start", "turn/steer"):
            params = message["params"]
            text = "\n".join(i["text"] for i in params["input"] if i.get("type") == "text")
            prompts.append((params.get("clientUserMessageId") or "", text))
    return prompts


def appserver_events(
    data: bytes, chunk: int = 0, prompts: Iterable[tuple[str, str]] = ()
) -> list[ReplayItem | dict[str, Any]]:
    """What the normalizer makes of Codex's stdout, fed in `chunk`-byte pieces.

    `prompts` are the client's own prompts, registered first as the driver
    registers each before sending it.
    """
    decoder = JsonLinesDecoder()
    normalizer = AppServerNormalizer(wall_clock_ns=lambda: NOW_NS)
    for client_id, text in prompts:
        normalizer.expect_prompt(client_id, text)
    out: list[ReplayItem | dict[str, Any]] = []

    def handle(message: dict[str, Any] | NotJson | Oversized) -> None:
        if isinstance(message, NotJson | Oversized):
            out.append({"noise": type(message).__name__})
            return
        method = message.get("method")
        if isinstance(method, str) and message.get("id") is not None:
            events, reply = normalizer.server_request(message["id"], method, message.get("params"))
            out.extend(events)
            if reply is not None:
                out.append(
                    {"reply": {"id": reply.rpc_id, "result": reply.result, "error": reply.error}}
                )
        elif isinstance(method, str):
            out.extend(normalizer.notification(method, message.get("params")))
        else:
            result = message.get("result")
            thread = result.get("thread") if isinstance(result, dict) else None
            if isinstance(thread, dict) and isinstance(result, dict):
                normalizer.thread_id = thread["id"]
                normalizer.model = result.get("model")

    for piece in _chunks(data, chunk):
        for message in decoder.feed(piece):
            handle(message)
    for message in decoder.end():
        handle(message)
    return out


def eventmsg_items(data: bytes, chunk: int = 0) -> list[ReplayItem | dict[str, Any]]:
    """EventMsg frames, one per line, through an `EventMsgNormalizer`."""
    decoder = JsonLinesDecoder()
    normalizer = EventMsgNormalizer(wall_clock_ns=lambda: NOW_NS)
    out: list[ReplayItem | dict[str, Any]] = []
    for piece in [*_chunks(data, chunk), None]:
        messages = decoder.end() if piece is None else decoder.feed(piece)
        for message in messages:
            if isinstance(message, NotJson | Oversized):
                out.append({"noise": type(message).__name__})
            else:
                out.extend(normalizer.feed(message))
    return out


def rollout_items(data: bytes, chunk: int = 0) -> list[ReplayItem]:
    reader = RolloutReader()
    items: list[ReplayItem] = []
    for piece in _chunks(data, chunk):
        items.extend(reader.feed(piece))
    items.extend(reader.end())
    return items


# ---- checking ----------------------------------------------------------------------


def as_event(kind: EventKind, extensions: dict[str, Any] | None = None) -> dict[str, object]:
    return Event(sequence=1, session_id="s1", kind=kind, extensions=extensions or {}).to_wire()


def check_outputs(items: Iterable[ReplayItem | dict[str, Any]]) -> None:
    """Every event kind a normalizer produced is a valid line-protocol Event."""
    for item in items:
        if isinstance(item, Emitted):
            check(
                "line-protocol.schema.json",
                "Event",
                as_event(item.kind, wire_extensions(item, None)),
            )
        elif isinstance(item, RequestAsked):
            check("line-protocol.schema.json", "Event", as_event(RequestOpened(item.request)))


def run_engine(items: Iterable[ReplayItem]) -> list[Event]:
    """Play replay items through a real engine (Ask mode); its events, schema-checked."""
    engine = Engine(
        session_id="s1",
        agent=AgentInstallation(
            id="codex", name="Codex", executable_path="codex", source=InstallationSource.PINNED
        ),
        handshake=Handshake(details=details_for()),
        clock=lambda: 0.0,
        wall_clock_ns=lambda: NOW_NS,
    )
    events: list[Event] = []
    for item in items:
        if isinstance(item, PromptSent):
            engine.prompt(item.text)
        else:
            engine.on_driver_event(item)
        engine.on_quiescent()
        engine.to_driver.clear()
        while engine.outbox:
            record = engine.outbox.popleft()
            if isinstance(record, Event):
                check("line-protocol.schema.json", "Event", record.to_wire())
                events.append(record)
    return events


# ---- golden files ------------------------------------------------------------------


def expected_path(folder: Path, name: str) -> Path:
    return folder / f"{name}.expected.json"


def described(folder: Path, name: str) -> list[object]:
    data = (folder / f"{name}.jsonl").read_bytes()
    if folder == APPSERVER:
        client = (folder / f"{name}.client.jsonl").read_bytes()
        return [describe(item) for item in appserver_events(data, prompts=our_prompts(client))]
    items = rollout_items(data) if folder == ROLLOUTS else eventmsg_items(data)
    return [describe(item) for item in items]


def update() -> None:
    for folder in (APPSERVER, ROLLOUTS, EVENTMSG):
        for name in recordings(folder):
            text = json.dumps(described(folder, name), indent=1, ensure_ascii=False) + "\n"
            expected_path(folder, name).write_text(text, encoding="utf-8")
            print(f"wrote {expected_path(folder, name).relative_to(FIXTURES)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python -m tests.unit.codex.golden --update")
    update()
