"""`corral import` (a real subprocess) on Gemini CLI chats, opencode exports and recorded wires.

The golden files recorded from the real CLIs:
`tests/fixtures/gemini/session.jsonl` (Gemini CLI's own chat file) and
`tests/fixtures/wire/gemini-acp.wire.jsonl` (what `corral serve
--record-wire` wrote for a Gemini session over ACP) in a folder, imported
as `corral import DIR`; `tests/fixtures/opencode/session.json` (`opencode
export`: opencode keeps its sessions in SQLite) named as a file, since a
folder import takes `*.jsonl` only. Each imports through its reader,
`corral transcripts show` shows its turns, and a second import adds
nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from corral.sinks.transcript import find_transcripts, read_transcript

from tests.support.schema import check

FIXTURES = Path(__file__).parents[1] / "fixtures"
FILES = {
    "gemini": FIXTURES / "gemini" / "session.jsonl",
    "acp": FIXTURES / "wire" / "gemini-acp.wire.jsonl",
}
EXPORT = FIXTURES / "opencode" / "session.json"
TURNS = {"gemini": 2, "acp": 2, "opencode": 3}
# What each transcript shows: its prompts and the agent's answers, in order.
SHOWN = {
    "gemini": [
        "CORRAL_TOOL: echo hello-import",
        "echo hello-import",
        "Tool said: hello-import",
        "Say something plain",
        "You said: Say something plain",
    ],
    "acp": [
        "CORRAL_TOOL: touch made.txt",
        "Execute: touch made.txt",
        "Say something plain",
        "You said: Say something plain",
    ],
    "opencode": [
        '"CORRAL_TOOL: echo hello-import"',
        "echo hello-import",
        "Tool said: hello-import",
        '"Say something plain"',
        "You said: Say something plain",
        '"CORRAL_ECHO last"',
        "You said: CORRAL_ECHO last",
    ],
}


def corral(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CORRAL_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "corral.actors.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_corral_import_reads_gemini_opencode_and_recorded_wires_once(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in FILES.values():
        shutil.copy(path, folder / path.name)
    home, archive = tmp_path / "home", str(tmp_path / "archive")

    first = corral(home, "import", str(folder), str(EXPORT), "--transcripts", archive)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 3, skipped 0, failed 0"), first.stdout
    ids = dict(re.findall(r"-> ((\w+)-[0-9a-f]+)$", first.stdout, re.MULTILINE))
    by_format = {fmt: tid for tid, fmt in ids.items()}
    assert set(by_format) == set(TURNS)

    again = corral(home, "import", str(folder), str(EXPORT), "--transcripts", archive)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("imported 0, skipped 3, failed 0"), again.stdout
    assert again.stdout.count("already imported as") == 3
    assert len(list(find_transcripts(Path(archive)))) == 3

    for fmt, transcript_id in by_format.items():
        shown = corral(home, "transcripts", "show", transcript_id, "--transcripts", archive)
        assert shown.returncode == 0, shown.stderr
        assert f"agent {fmt}," in shown.stdout, shown.stdout
        assert f"{TURNS[fmt]} turns" in shown.stdout, shown.stdout
        at = 0
        for text in SHOWN[fmt]:  # in this order
            found = shown.stdout.find(text, at)
            assert found >= 0, (fmt, text, shown.stdout)
            at = found + len(text)

    for files in find_transcripts(Path(archive)):
        read = read_transcript(files)
        assert read.header is not None and read.problems == []
        assert read.turns == TURNS[read.header.agent]
        for event in read.events():
            check("line-protocol.schema.json", "Event", event.to_wire())
