"""Ray is an optional extra: nothing imports it unless `--ray` / `ray=` is used."""

from __future__ import annotations

import subprocess
import sys

_PLAIN_USE = """
import asyncio, sys
from corral.actors.cli import build_parser
from corral.actors.runtime import Runtime
from corral.sources.mock import parse_script

async def main():
    script = parse_script({"turns": []})
    async with Runtime(mock=script, transcripts=False) as rt:
        session = await rt.open("mock", ".")
        await session.close()

build_parser().parse_args(["serve", "--mock", "tester"])
asyncio.run(main())
assert "ray" not in sys.modules, "ray was imported"
print("ok")
"""


def test_a_plain_runtime_and_serve_never_import_ray() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_USE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
