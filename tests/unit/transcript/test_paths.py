"""Where the archive lives and how its files are found."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corral.sinks.transcript import TranscriptSettings, default_transcripts_dir, find_transcripts
from corral.sinks.transcript._paths import live_transcript_id


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {"CORRAL_HOME": "/srv/corral", "XDG_DATA_HOME": "/x", "HOME": "/h"},
            "/srv/corral/transcripts",
        ),
        ({"XDG_DATA_HOME": "/data", "HOME": "/h"}, "/data/corral/transcripts"),
        ({"HOME": "/home/ann"}, "/home/ann/.local/share/corral/transcripts"),
        (
            {"CORRAL_HOME": "", "XDG_DATA_HOME": "", "HOME": "/h"},
            "/h/.local/share/corral/transcripts",
        ),
    ],
)
def test_the_archive_follows_corral_home_then_xdg(environ: dict[str, str], expected: str) -> None:
    assert default_transcripts_dir(environ) == Path(expected)


def test_settings_from_the_environment_take_overrides() -> None:
    settings = TranscriptSettings.from_environ({"CORRAL_HOME": "/c"}, dir=None, redact=False)
    assert settings.dir == Path("/c/transcripts") and settings.redact is False


def test_live_ids_are_unique_and_say_when_who_and_which_session() -> None:
    first = live_transcript_id("s1", "claude", 1_750_000_000 * 10**9)
    second = live_transcript_id("s1", "claude", 1_750_000_000 * 10**9)
    assert first != second
    assert re.fullmatch(r"20250615T150640Z-claude-s1-[0-9a-f]{6}", first)
    odd = live_transcript_id("s2", "my agent/../x", 0)
    assert "/" not in odd and " " not in odd and odd.startswith("19700101T000000Z-my-agent-")


def test_files_are_grouped_by_transcript_and_extras_ignored(tmp_path: Path) -> None:
    day = tmp_path / "2025-06-01"
    day.mkdir()
    for name in (
        "a.jsonl", "a.p0001.jsonl.gz", "a.p0002.jsonl", "a.p0002.jsonl.gz", "a.wire.jsonl",
        ".a.jsonl.123.tmp", "b.p0001.jsonl.gz", "notes.txt",
    ):  # fmt: skip
        (day / name).write_text("")
    (tmp_path / "import" / ".staging").mkdir(parents=True)
    (tmp_path / "import" / ".staging" / "c.jsonl").write_text("")
    found = {files.transcript_id: files for files in find_transcripts(tmp_path)}
    assert sorted(found) == ["a", "b"]
    assert [p.name for p in found["a"].parts] == ["a.p0001.jsonl.gz", "a.p0002.jsonl.gz"]
    assert found["a"].active == day / "a.jsonl"
    assert found["b"].all() == [day / "b.p0001.jsonl.gz"]  # its newest file is gone
