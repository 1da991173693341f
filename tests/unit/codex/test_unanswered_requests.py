"""Codex server requests corral does not serve are answered at once; the turn ends.

Against the fake `codex app-server` (`UNSERVED`: an MCP elicitation and an
`item/tool/call`, both waiting on corral): the elicitation gets Codex's
own decline, the unknown method -32601, each with a Diagnostic naming it
under `corral/declined`, and the turn goes on to its end.
"""

from __future__ import annotations

import json
from pathlib import Path

from corral.pipeline.driver import Emitted, TurnFinished
from corral.pipeline.events import Completed, Diagnostic, DiagnosticLevel, TextDelta

from tests.unit.codex.test_driver import _session, _start


async def test_requests_corral_does_not_serve_are_declined_and_the_turn_ends(
    tmp_path: Path,
) -> None:
    async with _session(tmp_path) as codex:
        await codex.driver.send(_start("UNSERVED"))
        finished = await codex.until(lambda e: isinstance(e, TurnFinished))
        assert isinstance(finished, TurnFinished) and finished.stop == Completed()
        notes = {
            e.extensions["corral/declined"]: e.kind.level
            for e in codex.events
            if isinstance(e, Emitted) and isinstance(e.kind, Diagnostic)
        }
        assert notes == {
            "mcpServer/elicitation/request": DiagnosticLevel.WARNING,
            "item/tool/call": DiagnosticLevel.INFO,
        }
        text = "".join(
            e.kind.text
            for e in codex.events
            if isinstance(e, Emitted) and isinstance(e.kind, TextDelta)
        )
        answers = json.loads(text)  # what the fake received for each request
        assert answers["2"] == {"action": "decline", "content": None}
        assert answers["3"]["code"] == -32601
