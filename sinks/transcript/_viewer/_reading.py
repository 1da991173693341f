"""The archive as the viewer reads it: blocking calls, one at a time, in a thread.

The viewer never writes the archive: it brings the SQLite index (derived
data, see `_index.py`) up to date without repairing anything
(`repair_unfinished=False`), so an unfinished transcript is shown as it is.
SQLite connections belong to the thread that made them, so every call
opens the index, asks, and closes it, under one lock: two requests never
update the index at once.

A session id from a URL is only ever looked up, never joined to a path:
it must name a transcript the index knows, exactly (no prefix matching),
and the files the index gives for it must lie under the archive root.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import attrs

from .._index import Hit, TranscriptIndex
from .._paths import TranscriptFiles, files_of
from .._reader import Transcript, is_live, read_transcript
from ._listing import Filters, Row, rows_of

__all__ = ["ArchiveReader", "Listing", "read"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")


@attrs.frozen(kw_only=True)
class Listing:
    rows: list[Row]
    agents: list[str]
    hits: list[Hit]
    problems: list[str]


class ArchiveReader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()

    def _index(self) -> tuple[TranscriptIndex, list[str]]:
        index = TranscriptIndex(self.root)
        return index, index.update(repair_unfinished=False).problems

    def listing(self, filters: Filters, *, search_limit: int = 50) -> Listing:
        with self._lock:
            index, problems = self._index()
            with index:
                return self._listing(index, filters, problems, search_limit)

    def _listing(
        self, index: TranscriptIndex, filters: Filters, problems: list[str], search_limit: int
    ) -> Listing:
        summaries = index.summaries()
        hits = list(index.search(filters.text, limit=search_limit)) if filters.text else []
        matching = {hit.transcript_id for hit in hits} if filters.text else None

        def live(transcript_id: str) -> bool:
            files = self._files_in(index, transcript_id)
            return files is not None and is_live(files)

        rows = rows_of(summaries, filters, live=live, matching=matching)
        agents = sorted({s.agent for s in summaries})
        return Listing(rows=rows, agents=agents, hits=hits, problems=problems)

    def files(self, transcript_id: str) -> TranscriptFiles | None:
        """The transcript's files, if `transcript_id` names one exactly; else None."""
        if _ID.fullmatch(transcript_id) is None:
            return None
        with self._lock:
            index, _ = self._index()
            with index:
                return self._files_in(index, transcript_id)

    def _files_in(self, index: TranscriptIndex, transcript_id: str) -> TranscriptFiles | None:
        if transcript_id not in index.resolve(transcript_id):
            return None
        paths = index.files(transcript_id)
        folder = paths[0].parent if paths else None
        root = self.root.resolve()
        if folder is None or not folder.resolve().is_relative_to(root):
            return None
        return files_of(folder / f"{transcript_id}.jsonl")


def read(files: TranscriptFiles) -> tuple[Transcript, bool]:
    """The transcript as far as it is written, and whether a writer still holds it."""
    live = is_live(files)
    return read_transcript(files), live
