"""`corral demo`: three scripted agents run through the whole pipeline, live.

A newcomer sees the main job without installing any agent: a coder (a
queued second prompt, an edit that the permission policy allows), a
reviewer (a plan and a search) and a tester (a command whose permission
the app answers). Every event is rendered as it arrives; a summary table
closes the run. The scripts are the mock agent's shipped examples.
"""

from __future__ import annotations

import asyncio
import sys
from importlib import resources
from typing import Any, TextIO

import orjson

from ..pipeline.commands import PermissionMode, SessionOptions
from ..pipeline.events import (
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    RequestOpened,
    TurnEnded,
)
from ..pipeline.extensions import marked_decision
from ..sinks._color import use_color
from ..sinks.metrics import Metrics
from ..sinks.transcript import Archive, TranscriptSettings
from ..sources.catalog import Catalog
from ..sources.mock import catalog_entry as mock_entry
from ..sources.mock import parse_script
from ._demo_render import Renderer, SessionTally
from .handle import Session
from .runtime import Runtime

__all__ = ["run_demo"]

AGENTS = (
    ("coder", "Mock coder", "coder.json"),
    ("reviewer", "Mock reviewer", "reviewer.json"),
    ("tester", "Mock tester", "tester.json"),
)


def _scaled(raw: Any, speed: float) -> Any:
    """The script with every Sleep divided by `speed` (0: no pauses at all)."""
    if isinstance(raw, list):
        return [_scaled(item, speed) for item in raw if not (speed == 0 and _is_sleep(item))]
    if isinstance(raw, dict):
        if _is_sleep(raw) and speed > 0:
            return {"Sleep": int(raw["Sleep"] / speed)}
        return {key: _scaled(value, speed) for key, value in raw.items()}
    return raw


def _is_sleep(raw: Any) -> bool:
    return isinstance(raw, dict) and set(raw) == {"Sleep"}


def demo_catalog(speed: float) -> Catalog:
    scripts = resources.files("corral.sources").joinpath("mock/scripts")
    entries = []
    for agent_id, name, file in AGENTS:
        raw = orjson.loads(scripts.joinpath(file).read_bytes())
        script = parse_script(_scaled(raw, speed))
        entries.append(mock_entry(script, agent_id=agent_id, name=name))
    return Catalog(entries)


async def _watch(
    session: Session, agent: str, render: Renderer, tally: SessionTally, turns: int
) -> None:
    """Render one session's events; act as the app for its open requests."""
    ended = 0
    async for event in session.events():
        render.event(session.id, agent, event)
        tally.add(event)
        match event.kind:
            case RequestOpened(request=PermissionRequest(id=request_id)) if (
                marked_decision(event) is None
            ):
                render.note(session.id, agent, "the app answers: AllowOnce")
                await session.answer(request_id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
            case TurnEnded():
                ended += 1
                if ended == turns:
                    await session.close()


async def run_demo(
    *,
    speed: float = 1.0,
    color: bool = True,
    out: TextIO | None = None,
    metrics: Metrics | None = None,
    transcripts: TranscriptSettings | Archive | bool = True,
) -> int:
    """Run the demo; every session is archived as `Runtime(transcripts=...)` says."""
    stream = out if out is not None else sys.stdout
    render = Renderer(stream, color=color and use_color(stream))  # a tty, no NO_COLOR
    render.banner()
    plan = [
        ("coder", PermissionMode.ACCEPT_EDITS, ["fix the failing date test", "run the tests"]),
        ("reviewer", PermissionMode.ASK, ["review the API change"]),
        ("tester", PermissionMode.ASK, ["install deps", "report coverage"]),
    ]
    tallies: dict[str, SessionTally] = {}
    runtime = Runtime(catalog=demo_catalog(speed), metrics=metrics, transcripts=transcripts)
    async with runtime as rt, asyncio.TaskGroup() as tasks:
        for agent, mode, prompts in plan:
            session = await rt.open(
                SessionOptions(agent=agent, dir=".", permission_mode=mode, show_auto_decisions=True)
            )
            tally = tallies[session.id] = SessionTally(agent=agent)
            render.opened(session.id, agent, mode.value)
            tasks.create_task(_watch(session, agent, render, tally, len(prompts)))
            for text in prompts:
                delivery = await session.prompt(text)
                render.delivered(session.id, agent, text, delivery)
    render.summary(tallies)
    return 0
