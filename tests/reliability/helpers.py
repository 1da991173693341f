"""Helpers for the reliability suite: process-mode mock scripts and /proc lookups."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from corral.actors.runtime import Runtime
from corral.pipeline.events import Event
from corral.sources.mock import parse_script


def text(body: str, message_id: str = "m1") -> dict[str, Any]:
    return {"Emit": {"TextDelta": {"message_id": message_id, "text": body}}}


END = {"End": {"Completed": {"source": "Protocol"}}}


def children_of(pid: int) -> list[int]:
    """Live (non-zombie) processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def children_running(pid: int, marker: bytes) -> list[int]:
    """`children_of(pid)` whose command line holds `marker`. A child may end
    between the listing and the look (a short probe of corral's own): skipped."""
    found = []
    for child in children_of(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if marker in command:
            found.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def kill_group(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)


async def run_turns(turns: list[list[Any]], prompts: int = 1) -> tuple[list[Event], Any]:
    """Play a process-mode script; return every event and the session."""
    script = parse_script({"process": True, "turns": turns})
    async with Runtime(mock=script) as rt:
        session = await rt.open("mock", dir=".")
        reader = asyncio.create_task(_collect(session))
        for n in range(prompts):
            await session.prompt(f"prompt {n}")
        async with asyncio.timeout(60):
            await session.wait_idle()  # idle, or ended
        await session.close()
        events = await reader
    return events, session


async def _collect(session: Any) -> list[Event]:
    return [event async for event in session.events()]
