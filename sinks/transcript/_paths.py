"""Where transcripts live and how their files are named.

    $CORRAL_HOME/transcripts/               (CORRAL_HOME defaults to $XDG_DATA_HOME/corral,
                                             i.e. ~/.local/share/corral)
        index.sqlite3                       the search index (derived; safe to delete)
        2025-06-01/<id>.jsonl               a session's transcript (the newest part)
        2025-06-01/<id>.p0001.jsonl.gz      older parts, after rotation by size
        2025-06-01/<id>.wire.jsonl          the raw wire, when recording is on
        import/<format>/<id>.jsonl          sessions imported from the agents' own files

A transcript id is `<UTC start>-<agent>-<session>-<random>` for live
sessions (session ids repeat across processes, so they are not enough) and
`<format>-<content hash>` for imports (so importing twice finds the first).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

__all__ = [
    "TranscriptFiles",
    "default_transcripts_dir",
    "find_transcripts",
    "live_transcript_id",
    "part_path",
]

_PART = re.compile(r"^(?P<id>.+)\.p(?P<part>\d{4,})\.jsonl(?P<gz>\.gz)?$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def default_transcripts_dir(environ: Mapping[str, str]) -> Path:
    home = environ.get("CORRAL_HOME")
    if home:
        return Path(home).expanduser() / "transcripts"
    data = environ.get("XDG_DATA_HOME") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".local", "share"
    )
    return Path(data).expanduser() / "corral" / "transcripts"


def safe_name(text: str, limit: int = 32) -> str:
    return _UNSAFE.sub("-", text).strip("-.")[:limit] or "x"


def live_transcript_id(session_id: str, agent_id: str, started_ns: int | None = None) -> str:
    started = time.gmtime((time.time_ns() if started_ns is None else started_ns) // 10**9)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", started)
    return f"{stamp}-{safe_name(agent_id)}-{safe_name(session_id)}-{secrets.token_hex(3)}"


def live_transcript_path(root: Path, transcript_id: str, started_ns: int | None = None) -> Path:
    started = time.gmtime((time.time_ns() if started_ns is None else started_ns) // 10**9)
    return root / time.strftime("%Y-%m-%d", started) / f"{transcript_id}.jsonl"


def part_path(active: Path, part: int, *, gz: bool) -> Path:
    stem = active.name.removesuffix(".jsonl")
    return active.with_name(f"{stem}.p{part:04d}.jsonl{'.gz' if gz else ''}")


@attrs.frozen(kw_only=True)
class TranscriptFiles:
    """Every file of one transcript, oldest part first; `active` may be missing."""

    transcript_id: str
    active: Path
    parts: tuple[Path, ...] = ()  # rotated parts, in order (a .gz preferred to its plain copy)

    def all(self) -> list[Path]:
        return [*self.parts, *([self.active] if self.active.exists() else [])]

    def next_part(self) -> int:
        numbers = [_part_number(p) for p in self.parts]
        return max(numbers, default=0) + 1


def _part_number(path: Path) -> int:
    match = _PART.match(path.name)
    return int(match["part"]) if match else 0


def _is_transcript_file(name: str) -> bool:
    return name.endswith((".jsonl", ".jsonl.gz")) and ".wire." not in name and ".tmp" not in name


def find_transcripts(root: Path) -> Iterator[TranscriptFiles]:
    """Every transcript under `root`, grouped from its files (sorted by id)."""
    groups: dict[tuple[Path, str], dict[int, Path]] = {}
    actives: dict[tuple[Path, str], Path] = {}
    for walked, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # staging, temporaries
        for name in names:
            if not _is_transcript_file(name):
                continue
            path = Path(walked) / name
            match = _PART.match(name)
            if match is not None:
                parts = groups.setdefault((path.parent, match["id"]), {})
                number = int(match["part"])
                if match["gz"] or number not in parts:
                    parts[number] = path  # the .gz is complete once it exists
            elif name.endswith(".jsonl"):
                key = (path.parent, name.removesuffix(".jsonl"))
                actives[key] = path
                groups.setdefault(key, {})
    for (folder, transcript_id), parts in sorted(groups.items(), key=lambda kv: kv[0][1]):
        yield TranscriptFiles(
            transcript_id=transcript_id,
            active=actives.get((folder, transcript_id), folder / f"{transcript_id}.jsonl"),
            parts=tuple(parts[n] for n in sorted(parts)),
        )


def files_of(active: Path) -> TranscriptFiles:
    """The files of the transcript whose newest part is (or would be) `active`."""
    transcript_id = active.name.removesuffix(".jsonl")
    found: dict[int, Path] = {}
    if active.parent.is_dir():
        for path in active.parent.glob(f"{glob_escape(transcript_id)}.p*.jsonl*"):
            match = _PART.match(path.name)
            if match is None or match["id"] != transcript_id or ".tmp" in path.name:
                continue
            number = int(match["part"])
            if match["gz"] or number not in found:
                found[number] = path
    return TranscriptFiles(
        transcript_id=transcript_id,
        active=active,
        parts=tuple(found[n] for n in sorted(found)),
    )


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)
