"""A live session of each real CLI, recorded with `--record-wire`, imported: the same session.

For Claude Code, Codex, Copilot's SDK server and Gemini CLI over ACP (each
pinned by `tests/support/realagents.py`, sandboxed, against the mock
model), a real `corral serve --record-wire` runs the session the golden
fixtures hold (`tests/fixtures/wire/record.py`: a shell tool corral asks
about and the app allows, then a plain answer). Then a real `corral import`
of the wire file it wrote must give the events of the live session's own
transcript again, compared as `tests/integration/test_import_wires.py`
compares the fixtures: so a CLI that changes its wire shows here first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from corral.sinks.transcript import find_transcripts, read_transcript

from tests.fixtures.wire.record import AGENTS, live_session
from tests.integration.test_import_more import corral
from tests.integration.test_import_wires import _same_session
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import require_agent

pytestmark = pytest.mark.e2e


def _events(archive: Path) -> list[dict[str, Any]]:
    (files,) = find_transcripts(archive)
    return [event.to_wire() for event in read_transcript(files).events()]


@pytest.mark.parametrize("entry", sorted(AGENTS))
async def test_an_imported_recorded_wire_is_the_live_session_again(
    entry: str, tmp_path: Path
) -> None:
    require_agent(AGENTS[entry][0])
    with MockModelServer() as server:
        archive, _ = await live_session(tmp_path / "live", server, entry)
    (wire,) = archive.rglob("*.wire.jsonl")
    imported = tmp_path / "imported"

    done = corral(tmp_path / "home", "import", str(wire), "--transcripts", str(imported))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("imported 1,"), done.stdout
    _same_session(_events(archive), _events(imported))
