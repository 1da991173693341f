"""Where the benchmark's sessions keep their transcripts: a scratch archive.

The measured pipeline is the one `corral serve` runs by default, transcript
sink included (redaction on, fsync at each turn end), but what it writes
must not land in the user's own archive; it goes to a temporary directory
removed afterwards.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...sinks.transcript import TranscriptSettings

__all__ = ["scratch_transcripts"]


@contextmanager
def scratch_transcripts() -> Iterator[TranscriptSettings]:
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as scratch:
        yield TranscriptSettings(dir=Path(scratch))
