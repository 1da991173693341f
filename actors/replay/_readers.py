"""Which agent wrote a file, and the reader that turns it into replay items.

Every provider declares the session files its agent writes in its own
catalog entry (`CatalogEntry.native_transcripts`, in `sources/<name>/`): a
format id and name, a recognizer of one JSON line, and a reader
`read(path) -> Iterable[ReplayItem]`. Nothing here names a provider:
`NativeReaders` gathers the formats of a catalog (the default one unless
given) and asks them.

`detect(path)` looks at the first lines only (never the whole file): the
first format whose recognizer accepts one of them, going line by line,
names the file. The exception: a file that is one JSON document instead
of JSON lines (an export, such as opencode's) is read whole, up to
`_DOCUMENT_BYTES`, and that document is the one object asked. A corral
transcript (its first line is the header of
`sinks/transcript`) is `corral`, already normalized and copied as it is.
None: no format corral knows.

Tests (and embedders) can pass their own formats, or their own readers for
formats the catalog knows (`readers` win over the formats' own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...sources.catalog import NativeReader, NativeTranscripts

__all__ = ["CORRAL_FORMAT", "NativeReaders", "ReaderUnavailable", "detect_format"]

CORRAL_FORMAT = "corral"
_PEEK_BYTES = 256 * 1024
_PEEK_LINES = 40
_DOCUMENT_BYTES = 64 * 1024 * 1024


class ReaderUnavailable(LookupError):
    """No reader for this format here: no catalog entry declares it."""


def _default_formats() -> list[NativeTranscripts]:
    from ...sources.registry import default_catalog

    return default_catalog().native_transcripts()


class NativeReaders:
    """The native transcript formats of a catalog, and the reader of each."""

    def __init__(
        self,
        readers: Mapping[str, NativeReader] | None = None,
        *,
        formats: Iterable[NativeTranscripts] | None = None,
    ) -> None:
        declared = _default_formats() if formats is None else formats
        self.formats: dict[str, NativeTranscripts] = {}
        for native in declared:
            self.formats.setdefault(native.format, native)  # the first entry to declare it
        self._readers = dict(readers or {})

    def detect(self, path: Path) -> str | None:
        """The format of `path` from its first lines; None when no format knows it."""
        return detect_format(path, self.formats.values())

    def format(self, format_id: str) -> NativeTranscripts:
        known = self.formats.get(format_id)
        if known is None:
            raise ReaderUnavailable(f"no reader for {format_id!r} files")
        return known

    def get(self, format_id: str) -> NativeReader:
        if format_id in self._readers:
            return self._readers[format_id]
        return self.format(format_id).read


def _peek(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as file:
        head = file.read(_PEEK_BYTES)
    objects: list[dict[str, Any]] = []
    lines = head.split(b"\n")
    if len(head) == _PEEK_BYTES:
        lines = lines[:-1]  # the last one may be cut by the peek
    for line in lines[:_PEEK_LINES]:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    if not objects and head.lstrip().startswith(b"{"):
        return _document(path)
    return objects


def _document(path: Path) -> list[dict[str, Any]]:
    """A file that is one (pretty-printed) JSON object, not JSON lines."""
    if path.stat().st_size > _DOCUMENT_BYTES:
        return []
    try:
        value = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        return []
    return [value] if isinstance(value, dict) else []


def detect_format(path: Path, formats: Iterable[NativeTranscripts] | None = None) -> str | None:
    """The format of `path` among `formats` (default: the default catalog's), or `corral`."""
    try:
        objects = _peek(path)
    except OSError:
        return None
    if objects and isinstance(objects[0].get("transcript"), dict):
        return CORRAL_FORMAT
    known = list(_default_formats() if formats is None else formats)
    for value in objects:
        for native in known:
            if native.recognizes(value, path):
                return native.format
    return None
