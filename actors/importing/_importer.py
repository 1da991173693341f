"""`corral import`: the agents' own transcripts, normalized into the archive.

For each file: detect its format and read it with that agent's reader into
replay items (`actors.replay.NativeReaders`: the formats the providers
declare in their catalog entries), run them through a real engine
(`actors.replay.replay`), and write the records with the same writer (and
redaction) as a live session (`sinks.transcript`), to
`import/<format>/<format>-<hash>.jsonl`. It lives in `actors/` because it
drives the engine and feeds a sink: it joins a source to a sink, which
neither may do by itself.

- Idempotent: the transcript id is the hash of the file's content, so a
  file imported before is found and skipped ("already imported"); a file
  that has grown since is a new version and is imported again.
- Atomic: a transcript is written in `import/.staging/` and linked into
  place only once complete, so an import that dies leaves nothing that
  looks imported.
- Every file gets an outcome: imported, skipped (with why: not a format
  corral knows, already imported) or failed (the
  reader or the disk said why; a `--record-wire` file of a wire no source
  reads back says what it begins with). Nothing is passed over in silence.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from ...pipeline.driver import PromptSent, ReplayItem
from ...pipeline.records import SinkItem
from ...sinks.transcript import (
    FsyncPolicy,
    TranscriptWriteError,
    TranscriptWriter,
    WriterSettings,
    files_of,
    fsync_dir,
    read_transcript,
)
from ...sources._recorded_wire import unknown_wire
from .._progress import Progress
from ..replay import CORRAL_FORMAT, NativeReaders, ReplaySession, imported_installation, replay

__all__ = ["ImportReport", "Progress", "import_paths"]


@attrs.define(kw_only=True)
class ImportReport:
    imported: list[tuple[Path, str]] = attrs.field(factory=list)  # file, transcript id
    skipped: list[tuple[Path, str]] = attrs.field(factory=list)  # file, why
    failed: list[tuple[Path, str]] = attrs.field(factory=list)  # file, why

    def render(self) -> str:
        lines = [
            f"imported {len(self.imported)}, skipped {len(self.skipped)}, failed {len(self.failed)}"
        ]
        for path, transcript_id in self.imported:
            lines.append(f"  imported  {path} -> {transcript_id}")
        for label, entries in (("skipped", self.skipped), ("failed", self.failed)):
            for path, why in entries:
                lines.append(f"  {label:<8}  {path}: {why}")
        return "\n".join(lines) + "\n"


def expand(paths: Iterable[Path], report: ImportReport) -> list[Path]:
    """Files to look at: each file given, and every *.jsonl under each directory."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            report.skipped.append((path, "no such file or directory"))
    return found


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _started_ns(items: Sequence[ReplayItem], path: Path) -> int:
    for item in items:
        if isinstance(item, PromptSent) and item.at_ns is not None:
            return item.at_ns
    return path.stat().st_mtime_ns


@attrs.frozen(kw_only=True)
class _Target:
    format_id: str
    transcript_id: str
    final: Path
    staging: Path
    digest: str


def _target(root: Path, path: Path, format_id: str) -> _Target:
    digest = _digest(path)
    transcript_id = f"{format_id}-{digest[:24]}"
    folder = root / "import"
    return _Target(
        format_id=format_id,
        transcript_id=transcript_id,
        final=folder / format_id / f"{transcript_id}.jsonl",
        staging=folder / ".staging" / f"{transcript_id}.{os.getpid()}.jsonl",
        digest=digest,
    )


def _publish(target: _Target) -> bool:
    """Link the finished staging file into place; False if it is already there."""
    target.final.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.link(target.staging, target.final)
    except FileExistsError:
        return False
    finally:
        target.staging.unlink(missing_ok=True)
    fsync_dir(target.final.parent)
    return True


def _replayed(
    target: _Target, path: Path, items: list[ReplayItem], agent_name: str
) -> list[SinkItem]:
    session = ReplaySession(
        session_id=target.transcript_id,
        agent=imported_installation(target.format_id, agent_name),
        started_ns=_started_ns(items, path),
    )
    return list(replay(items, session=session))


def _write(target: _Target, path: Path, records: list[SinkItem], settings: WriterSettings) -> None:
    writer = TranscriptWriter(
        path=target.staging,
        transcript_id=target.transcript_id,
        settings=attrs.evolve(settings, fsync=FsyncPolicy.NEVER, rotate_bytes=2**62),
        source={
            "kind": "import",
            "format": target.format_id,
            "path": str(path),
            "sha256": target.digest,
        },
    )
    try:
        writer.write(records)
    finally:
        writer.abandon()
    with target.staging.open("rb") as written:
        os.fsync(written.fileno())


def _copy_corral(root: Path, path: Path, report: ImportReport) -> None:
    """A corral transcript from elsewhere: checked, then copied as it is."""
    transcript = read_transcript(files_of(path))
    if transcript.header is None or transcript.problems:
        report.failed.append((path, "a damaged corral transcript (run `corral transcripts show`)"))
        return
    final = root / "import" / "corral" / path.name
    if final.exists():
        report.skipped.append((path, "already in the archive"))
        return
    final.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    shutil.copyfile(path, staging)
    try:
        os.link(staging, final)
    except FileExistsError:
        report.skipped.append((path, "already in the archive"))
        return
    finally:
        staging.unlink(missing_ok=True)
    report.imported.append((path, transcript.transcript_id))


def import_file(
    path: Path,
    *,
    root: Path,
    settings: WriterSettings,
    readers: NativeReaders,
    report: ImportReport,
) -> None:
    format_id = readers.detect(path)
    if format_id is None:
        unreadable = unknown_wire(path)  # a wire recording: why not, rather than a skip
        if unreadable is not None:
            report.failed.append((path, unreadable))
        else:
            report.skipped.append((path, "not a transcript format corral knows"))
        return
    if format_id == CORRAL_FORMAT:
        _copy_corral(root, path, report)
        return
    target = _target(root, path, format_id)
    if target.final.exists():
        report.skipped.append((path, f"already imported as {target.transcript_id}"))
        return
    reader, name = readers.get(format_id), readers.format(format_id).name
    try:
        records = _replayed(target, path, list(reader(path)), name)
    except Exception as error:  # one unreadable file must not stop the rest; it is reported
        report.failed.append((path, f"the {format_id} reader failed: {error!r}"))
        return
    try:
        _write(target, path, records, settings)
    except (TranscriptWriteError, OSError) as error:
        target.staging.unlink(missing_ok=True)
        report.failed.append((path, f"cannot write the transcript: {error}"))
        return
    if _publish(target):
        report.imported.append((path, target.transcript_id))
    else:
        report.skipped.append((path, f"already imported as {target.transcript_id}"))


def import_paths(
    paths: Iterable[Path],
    *,
    root: Path,
    settings: WriterSettings,
    readers: NativeReaders | None = None,
    progress: Callable[[int], Progress] | None = None,
) -> ImportReport:
    report = ImportReport()
    files = expand(paths, report)
    bar = progress(len(files)) if progress is not None else None
    readers = readers if readers is not None else NativeReaders()
    for path in files:
        import_file(path, root=root, settings=settings, readers=readers, report=report)
        if bar is not None:
            bar.step(path.name)
    if bar is not None:
        bar.finish()
    return report
