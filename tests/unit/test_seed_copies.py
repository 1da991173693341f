"""The project's copies of the seed schemas stay equal to the seeds."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
COPIES = (
    "line-protocol.schema.json",
    "app-server-notifications.schema.json",
    "codex-eventmsg.schema.json",
    "copilot-session-events.schema.json",
    "acp-moonacp-reference.txt",
)


@pytest.mark.parametrize("name", COPIES)
def test_the_copy_equals_the_seed(name: str) -> None:
    if not SEEDS.is_dir():
        pytest.skip("../shared/seeds is not present on this machine")
    copy = resources.files("corral.pipeline").joinpath(f"schema/{name}").read_bytes()
    assert copy == (SEEDS / name).read_bytes()


def test_corral_schema_prints_the_line_protocol_schema(capsys: pytest.CaptureFixture[str]) -> None:
    from corral.actors.cli import main

    assert main(["schema"]) == 0
    copy = resources.files("corral.pipeline").joinpath("schema/line-protocol.schema.json")
    assert capsys.readouterr().out == copy.read_text("utf-8")
