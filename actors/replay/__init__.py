"""Replay: recorded sessions and the agents' own transcripts, through a real engine.

`replay(items, session=...)` runs `PromptSent` and `DriverEvent`s through
the session engine and yields the records a live session would have
produced. `detect_format` and `NativeReaders` find which agent wrote a file
and the reader (`sources/<agent>/read_native_transcript`) that reads it.
"""

from ...pipeline.records import Prompted
from ._readers import (
    AGENT_FORMATS,
    AgentFormat,
    NativeReader,
    NativeReaders,
    ReaderUnavailable,
    detect_format,
)
from ._runner import ReplaySession, imported_installation, replay

__all__ = [
    "AGENT_FORMATS",
    "AgentFormat",
    "NativeReader",
    "NativeReaders",
    "Prompted",
    "ReaderUnavailable",
    "ReplaySession",
    "detect_format",
    "imported_installation",
    "replay",
]
