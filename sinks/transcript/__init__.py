"""The transcript archive: every session kept, crash-safe, redacted, searchable.

- `Archive` / `TranscriptSettings`: per-Runtime configuration and the sink
  factory (`Runtime(sinks=[archive.sink_factory])`); `TranscriptSink` is one
  session's sink, `TranscriptWriter` the blocking writer under it.
- `read_transcript`, `repair`, `find_transcripts`: reading the archive back.
- `TranscriptIndex`: the SQLite full-text index, updated incrementally.
- `corral import` (the agents' own transcripts, normalized into the archive)
  drives the engine, so it lives in `actors/importing`, above this package.
- `register_cli`, `add_archive_options`, `settings_from_args`: the command line.

The file format is described in `_format.py`.
"""

from ._archive import Archive, TranscriptSettings
from ._cli import add_archive_options, register_cli, settings_from_args
from ._file import FsyncPolicy, TranscriptWriteError, fsync_dir
from ._format import FORMAT_VERSION
from ._index import TranscriptIndex
from ._paths import TranscriptFiles, default_transcripts_dir, files_of, find_transcripts
from ._reader import Problem, Transcript, is_live, read_transcript, repair
from ._redact import Redactor
from ._sink import TranscriptSink
from ._wire import WireRecorder
from ._writer import TranscriptWriter, WriterSettings

__all__ = [
    "FORMAT_VERSION",
    "Archive",
    "FsyncPolicy",
    "Problem",
    "Redactor",
    "Transcript",
    "TranscriptFiles",
    "TranscriptIndex",
    "TranscriptSettings",
    "TranscriptSink",
    "TranscriptWriteError",
    "TranscriptWriter",
    "WireRecorder",
    "WriterSettings",
    "add_archive_options",
    "default_transcripts_dir",
    "files_of",
    "find_transcripts",
    "fsync_dir",
    "is_live",
    "read_transcript",
    "register_cli",
    "repair",
    "settings_from_args",
]
