"""`corral import`: native transcripts normalized into the archive, idempotently."""

from __future__ import annotations

import io
import json
from pathlib import Path

from corral.actors.importing import ImportReport, Progress, import_paths
from corral.actors.replay import NativeReaders
from corral.pipeline.driver import ReplayItem
from corral.sinks.transcript import (
    TranscriptIndex,
    WriterSettings,
    find_transcripts,
    read_transcript,
)

from tests.support.schema import check, validator

from .readers import FIXTURES, SECRETS, TEST_READERS, WORDS, planted_copy

SETTINGS = WriterSettings(corral_version="0.1.0")


def _import(paths: list[Path], root: Path, readers: NativeReaders | None = None) -> ImportReport:
    return import_paths(
        paths, root=root, settings=SETTINGS, readers=readers or NativeReaders(TEST_READERS)
    )


def test_the_copilot_fixture_is_made_of_session_events() -> None:
    for line in (FIXTURES / "copilot" / "events.jsonl").read_text().splitlines():
        check("copilot-session-events.schema.json", "SessionEvent", json.loads(line))


def test_the_codex_fixture_carries_event_msgs() -> None:
    (path,) = (FIXTURES / "codex").glob("rollout-*.jsonl")
    messages = [json.loads(line) for line in path.read_text().splitlines()]
    event_msgs = [m["payload"] for m in messages if m["type"] == "event_msg"]
    assert event_msgs
    for payload in event_msgs:
        errors = list(validator("codex-eventmsg.schema.json", None).iter_errors(payload))
        assert errors == [], payload["type"]


def test_each_agent_s_transcript_is_imported_and_searchable(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    root = tmp_path / "archive"
    report = _import(list(native.values()), root)
    assert len(report.imported) == 3 and report.skipped == [] and report.failed == []
    with TranscriptIndex(root) as index:
        index.update()
        for format_id, word in WORDS.items():
            hits = list(index.search(word))
            assert hits, word
            assert {hit.agent for hit in hits} == {format_id}


def test_an_imported_session_is_a_normal_transcript_of_its_agent(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    root = tmp_path / "archive"
    _import([native["codex"]], root)
    (files,) = find_transcripts(root)
    read = read_transcript(files)
    assert read.problems == [] and read.footer is not None
    assert read.header is not None and read.header.agent == "codex"
    assert read.header.source["kind"] == "import" and read.header.source["format"] == "codex"
    assert read.header.source["path"] == str(native["codex"])
    events = read.events()
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert read.turns == 1
    assert read.footer.count("tokens") == 940


def test_planted_secrets_never_reach_the_archive(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    for format_id, path in native.items():
        assert any(secret in path.read_text() for secret in SECRETS.values()), format_id
    root = tmp_path / "archive"
    _import(list(native.values()), root)
    with TranscriptIndex(root) as index:
        index.update()
    written = [path for path in root.rglob("*") if path.is_file()]
    assert len(written) >= 4  # three transcripts and the index
    for path in written:
        data = path.read_bytes()
        for secret in SECRETS.values():
            assert secret.encode() not in data, (path, secret)


def test_importing_twice_adds_nothing(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    root = tmp_path / "archive"
    _import([tmp_path / "native"], root)
    before = sorted(p.relative_to(root) for p in root.rglob("*.jsonl"))
    again = _import([tmp_path / "native"], root)
    assert again.imported == []
    assert [why.split(" as ")[0] for _, why in again.skipped] == ["already imported"] * 3
    assert sorted(p.relative_to(root) for p in root.rglob("*.jsonl")) == before
    assert len(native) == 3


def test_every_file_that_is_not_imported_says_why(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    stray = tmp_path / "native" / "notes.jsonl"
    stray.write_text('{"hello": "world"}\n')
    without_codex = [f for f in NativeReaders().formats.values() if f.format != "codex"]
    readers = NativeReaders(TEST_READERS, formats=without_codex)
    report = _import([tmp_path / "native", tmp_path / "missing.jsonl"], tmp_path / "a", readers)
    reasons = {path.name: why for path, why in report.skipped}
    assert reasons["notes.jsonl"] == "not a transcript format corral knows"
    assert reasons["missing.jsonl"] == "no such file or directory"
    assert reasons[native["codex"].name] == "not a transcript format corral knows"
    assert len(report.imported) == 2


def test_a_reader_that_fails_fails_that_file_only(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")

    def broken(path: Path) -> list[ReplayItem]:
        raise ValueError("line 3: not what I expected")

    readers = NativeReaders({**TEST_READERS, "copilot": broken})
    report = _import(list(native.values()), tmp_path / "a", readers)
    ((path, why),) = report.failed
    assert path == native["copilot"] and "not what I expected" in why
    assert len(report.imported) == 2
    assert not list((tmp_path / "a").rglob("copilot-*"))  # nothing half-imported


def test_the_progress_bar_counts_files(tmp_path: Path) -> None:
    planted_copy(tmp_path / "native")
    stream = io.StringIO()
    import_paths(
        [tmp_path / "native"],
        root=tmp_path / "a",
        settings=SETTINGS,
        readers=NativeReaders(TEST_READERS),
        progress=lambda total: Progress(total, stream=stream),
    )
    shown = stream.getvalue()
    assert "1/3" in shown and "3/3" in shown and shown.endswith("\n")


def test_the_report_lists_every_outcome(tmp_path: Path) -> None:
    native = planted_copy(tmp_path / "native")
    report = _import([native["claude"], tmp_path / "gone.jsonl"], tmp_path / "a")
    text = report.render()
    assert text.startswith("imported 1, skipped 1, failed 0\n")
    assert "gone.jsonl: no such file or directory" in text


def test_a_corral_transcript_from_elsewhere_is_copied_once(tmp_path: Path) -> None:
    from .helpers import closed, opened, turn, writer

    elsewhere = tmp_path / "elsewhere" / "20250601T000000Z-mock-s1-abcdef.jsonl"
    writer(elsewhere).write([opened(), *turn(1, "from another machine"), closed(6)])
    root = tmp_path / "archive"
    first = _import([elsewhere], root)
    again = _import([elsewhere], root)
    assert first.imported == [(elsewhere, "20250601T000000Z-mock-s1-abcdef")]
    assert again.skipped == [(elsewhere, "already in the archive")]
    (files,) = find_transcripts(root)
    assert files.active.read_bytes() == elsewhere.read_bytes()
