"""Replay: recorded sessions and the agents' own transcripts, through a real engine.

`replay(items, session=...)` runs `PromptSent` and `DriverEvent`s through
the session engine and yields the records a live session would have
produced. `NativeReaders` (and `detect_format`) find which agent wrote a
file and the reader that reads it, among the formats the catalog entries
declare (`CatalogEntry.native_transcripts`, from `sources/<agent>/`).

It drives the engine, so it lives in `actors/`, above the sources whose
readers it runs.
"""

from ...pipeline.records import Prompted
from ._readers import CORRAL_FORMAT, NativeReaders, ReaderUnavailable, detect_format
from ._runner import ReplaySession, imported_installation, replay

__all__ = [
    "CORRAL_FORMAT",
    "NativeReaders",
    "Prompted",
    "ReaderUnavailable",
    "ReplaySession",
    "detect_format",
    "imported_installation",
    "replay",
]
