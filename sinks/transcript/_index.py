"""The archive's SQLite index: one summary row per transcript, full-text search.

`<archive>/index.sqlite3` is derived data: deleting it only costs a rebuild.

    transcripts(id, files, signature, agent, session, title, started, ended,
                status, turns, events, tokens, cost, problems, source)
    chunks: FTS5(body; transcript, sequence, role unindexed)

`update()` keeps it current incrementally: it walks the archive, compares
each transcript's file signature (path, size, mtime of every part) with
the stored one, and re-reads only the transcripts that changed, appeared
or vanished. Reopening is where crash repair happens: a transcript with
no footer that no writer holds is repaired (torn line cut and counted,
footer `interrupted`) before it is indexed. A live transcript is indexed
as far as it is written and re-read once it grows.

Chunks are the readable blocks (`_view.blocks`): a prompt, an assistant
message with its deltas joined, a tool call, a diagnostic... so a phrase
split across deltas is still found.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import attrs
import orjson

from ._paths import TranscriptFiles, find_transcripts
from ._reader import Transcript, is_live, read_transcript, repair
from ._view import Block, Summary, blocks, summary

__all__ = ["Hit", "IndexUpdate", "TranscriptIndex"]

_SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS transcripts(
    id TEXT PRIMARY KEY, files TEXT NOT NULL, signature TEXT NOT NULL,
    agent TEXT, session TEXT, title TEXT, started REAL, ended REAL, status TEXT,
    turns INTEGER, events INTEGER, tokens INTEGER, cost REAL, problems INTEGER, source TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(
    body, transcript UNINDEXED, sequence UNINDEXED, role UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2');
"""
_INDEXED_ROLES = frozenset(
    {"prompt", "assistant", "reasoning", "user", "tool", "request", "diagnostic", "error",
     "plan", "info"}
)  # fmt: skip


@attrs.frozen(kw_only=True)
class Hit:
    transcript_id: str
    sequence: int
    role: str
    snippet: str
    agent: str
    started: float


@attrs.define(kw_only=True)
class IndexUpdate:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    repaired: list[str] = attrs.field(factory=list)
    problems: list[str] = attrs.field(factory=list)


def _signature(files: TranscriptFiles) -> str:
    parts = []
    for path in files.all():
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        parts.append([str(path), stat.st_size, stat.st_mtime_ns])
    return orjson.dumps(parts).decode()


class TranscriptIndex:
    def __init__(self, root: Path, *, database: Path | None = None) -> None:
        self.root = root
        self.path = database if database is not None else root / "index.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._db = sqlite3.connect(self.path)
        self._db.executescript(_SCHEMA)
        version = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if version is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
            self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TranscriptIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- keeping it current --------------------------------------------------------

    def update(self, *, repair_unfinished: bool = True) -> IndexUpdate:
        report = IndexUpdate()
        known = dict(self._db.execute("SELECT id, signature FROM transcripts").fetchall())
        seen: set[str] = set()
        for files in find_transcripts(self.root):
            seen.add(files.transcript_id)
            signature = _signature(files)
            if known.get(files.transcript_id) == signature:
                report.unchanged += 1
                continue
            self._reindex(files, report, repair_unfinished=repair_unfinished)
            report.indexed += 1
        for gone in set(known) - seen:
            self._forget(gone)
            report.removed += 1
        self._db.commit()
        return report

    def _reindex(
        self, files: TranscriptFiles, report: IndexUpdate, *, repair_unfinished: bool
    ) -> None:
        transcript = read_transcript(files)
        live = is_live(files)
        if transcript.footer is None and not live and repair_unfinished:
            try:
                if repair(files) is not None:
                    report.repaired.append(files.transcript_id)
                    transcript = read_transcript(files)
            except OSError as error:
                report.problems.append(f"{files.transcript_id}: cannot repair: {error}")
        report.problems += [f"{files.transcript_id}: {p}" for p in transcript.problems]
        self._store(files, transcript, summary(transcript, live=live))

    def _forget(self, transcript_id: str) -> None:
        self._db.execute("DELETE FROM chunks WHERE transcript = ?", (transcript_id,))
        self._db.execute("DELETE FROM transcripts WHERE id = ?", (transcript_id,))

    def _store(self, files: TranscriptFiles, transcript: Transcript, row: Summary) -> None:
        self._forget(files.transcript_id)
        paths = orjson.dumps([str(p) for p in files.all()]).decode()
        self._db.execute(
            "INSERT INTO transcripts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                row.transcript_id, paths, _signature(files), row.agent, row.session, row.title,
                row.started, row.ended, row.status, row.turns, row.events, row.tokens,
                row.cost_usd, row.problems, row.source,
            ),
        )  # fmt: skip
        self._db.executemany(
            "INSERT INTO chunks(body, transcript, sequence, role) VALUES (?,?,?,?)",
            [
                (
                    _body(block),
                    row.transcript_id,
                    block.sequence,
                    block.role,
                )
                for block in blocks(transcript)
                if block.role in _INDEXED_ROLES and (block.text or block.title)
            ],
        )

    # ---- asking ------------------------------------------------------------------

    def summaries(self, *, limit: int | None = None) -> list[Summary]:
        query = (
            "SELECT id, agent, session, title, started, ended, status, turns, events, tokens,"
            " cost, problems, source FROM transcripts ORDER BY started DESC, id DESC"
        )
        rows = self._db.execute(query + (" LIMIT ?" if limit else ""), (limit,) if limit else ())
        return [
            Summary(
                transcript_id=r[0], agent=r[1], session=r[2], title=r[3], started=r[4],
                ended=r[5], status=r[6], turns=r[7], events=r[8], tokens=r[9], cost_usd=r[10],
                problems=r[11], source=r[12],
            )
            for r in rows
        ]  # fmt: skip

    def files(self, transcript_id: str) -> list[Path]:
        row = self._db.execute(
            "SELECT files FROM transcripts WHERE id = ?", (transcript_id,)
        ).fetchone()
        return [] if row is None else [Path(p) for p in orjson.loads(row[0])]

    def resolve(self, wanted: str) -> list[str]:
        """Transcript ids matching `wanted`: exact, else unique prefix, else substring."""
        ids = [row[0] for row in self._db.execute("SELECT id FROM transcripts")]
        if wanted in ids:
            return [wanted]
        prefixed = [i for i in ids if i.startswith(wanted)]
        return prefixed or [i for i in ids if wanted in i]

    def search(self, text: str, *, limit: int = 50) -> Iterator[Hit]:
        query = _fts_query(text)
        if not query:
            return
        rows = self._db.execute(
            "SELECT c.transcript, c.sequence, c.role,"
            " snippet(chunks, 0, '[', ']', '…', 12), t.agent, t.started"
            " FROM chunks c JOIN transcripts t ON t.id = c.transcript"
            " WHERE chunks MATCH ? ORDER BY rank LIMIT ?",
            (query, limit),
        )
        for transcript_id, sequence, role, snippet, agent, started in rows:
            yield Hit(
                transcript_id=transcript_id,
                sequence=int(sequence),
                role=role,
                snippet=" ".join(snippet.split()),
                agent=agent,
                started=started,
            )


def _body(block: Block) -> str:
    return f"{block.title}\n{block.text}\n{block.diff}".strip()


def _fts_query(text: str) -> str:
    """Plain words become an AND of quoted terms: no FTS syntax reaches the user."""
    words = [word.replace('"', '""') for word in text.split()]
    return " ".join(f'"{word}"' for word in words if word)
