"""The archive as a Runtime sees it: settings, the per-session sink factory.

One `Archive` per Runtime (no global state). A `Runtime` makes its own
from `$CORRAL_HOME` unless told otherwise (`Runtime(transcripts=...)`): a
`TranscriptSettings`, an `Archive` the caller owns, or False for none. By
hand, `Runtime(sinks=[archive.sink_factory], telemetry=Telemetry(archive.observers))`
gives every session a transcript (and, when asked, a raw wire recording).
The archive owns the worker thread that does the disk I/O (`DiskWorker`: one
thread, so the loop shares the GIL with one other, each round of it taking
every session's pending batch), so a slow disk never blocks the event loop;
`close()` it when the Runtime is done.

    archive = Archive(TranscriptSettings.from_environ(os.environ), metrics=metrics)
    async with Runtime(transcripts=archive):
        ...
    archive.close()

With `metrics` (a `sinks.metrics.Metrics`), every session's sink reports the
bytes it wrote, its fsync times and a write failure.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import attrs

from ...pipeline.commands import McpServer
from ...pipeline.telemetry import Observer
from ._file import FsyncPolicy
from ._paths import default_transcripts_dir, live_transcript_id, live_transcript_path
from ._redact import Redactor, secret_values
from ._sink import TranscriptMetrics, TranscriptSink
from ._wire import WireRecorder
from ._worker import DiskWorker
from ._writer import TranscriptWriter, WriterSettings

__all__ = ["Archive", "TranscriptSettings", "corral_version"]


def corral_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("corral")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@attrs.frozen(kw_only=True)
class TranscriptSettings:
    dir: Path
    fsync: FsyncPolicy = FsyncPolicy.TURN
    redact: bool = True
    rotate_bytes: int = 64 * 1024 * 1024
    record_wire: bool = False
    corral_version: str = attrs.field(factory=corral_version)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], **overrides: object) -> TranscriptSettings:
        """Defaults from `$CORRAL_HOME` / `$XDG_DATA_HOME`; `overrides` win."""
        fields: dict[str, object] = {"dir": default_transcripts_dir(environ)}
        fields.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**fields)  # type: ignore[arg-type]

    def writer_settings(self) -> WriterSettings:
        return WriterSettings(
            corral_version=self.corral_version,
            fsync=self.fsync,
            redactor=Redactor() if self.redact else None,
            rotate_bytes=self.rotate_bytes,
        )


def _print_failure(message: str) -> None:
    print(f"corral: {message}", file=sys.stderr, flush=True)


class Archive:
    def __init__(
        self,
        settings: TranscriptSettings,
        *,
        report: Callable[[str], None] = _print_failure,
        writer: WriterSettings | None = None,
        metrics: TranscriptMetrics | None = None,
    ) -> None:
        """`writer` replaces the writer settings made from `settings` (tests: a failing disk)."""
        self.settings = settings
        self.metrics = metrics
        self._report = report
        self._writer_settings = writer if writer is not None else settings.writer_settings()
        self._worker = DiskWorker()
        self.wire = (
            WireRecorder(redactor=self._writer_settings.redactor) if settings.record_wire else None
        )
        self.sinks: dict[str, TranscriptSink] = {}  # live sessions, by session id
        self._unmade: dict[str, tuple[str, ...]] = {}  # secrets learnt before the sink was made
        self.created = 0  # transcripts of ended sessions that were created (kept, maybe partly)

    @property
    def observers(self) -> list[Observer]:
        return [] if self.wire is None else [self.wire]

    def sink_factory(self, session_id: str, agent_id: str, dir: str) -> TranscriptSink:
        """A new session's sink: `Runtime(sinks=[archive.sink_factory])`."""
        started = time.time_ns()
        transcript_id = live_transcript_id(session_id, agent_id, started)
        path = live_transcript_path(self.settings.dir, transcript_id, started)
        writer = TranscriptWriter(
            path=path, transcript_id=transcript_id, settings=self._writer_settings
        )
        sink = TranscriptSink(
            writer,
            session_id=session_id,
            worker=self._worker,
            on_closed=self._ended,
            metrics=self.metrics,
        )
        sink.on_failure(lambda _sink, message, _fields: self._report(message))
        self.sinks[session_id] = sink
        if self.wire is not None:
            self.wire.register(session_id, path.with_name(f"{transcript_id}.wire.jsonl"))
        if (values := self._unmade.pop(session_id, None)) is not None:
            self._teach(session_id, sink, values)
        return sink

    def learn_secrets(
        self,
        session_id: str,
        env: Iterable[tuple[str, str]],
        mcp_servers: Iterable[McpServer] = (),
    ) -> None:
        """Mask the secrets the app gave a session (`open`'s `env`, its MCP servers' env
        and headers) wherever they appear in its files, from its first record on."""
        pairs = [*env]
        for server in mcp_servers:
            pairs += [*server.env, *server.headers]
        values = secret_values(pairs)
        if not values:
            return
        sink = self.sinks.get(session_id)
        if sink is None:  # its files are not made yet: they learn them when they are
            self._unmade[session_id] = values
            return
        self._teach(session_id, sink, values)

    def _teach(self, session_id: str, sink: TranscriptSink, values: tuple[str, ...]) -> None:
        sink.writer.learn_secrets(values)
        if self.wire is not None:
            self.wire.learn_secrets(session_id, values)

    def _ended(self, session_id: str) -> None:
        sink = self.sinks.pop(session_id, None)
        if sink is not None and sink.writer.created:
            self.created += 1
        if self.wire is not None:
            self.wire.release(session_id)

    def close(self) -> None:
        """Wait for pending writes and stop the worker thread."""
        self._worker.close()
        if self.wire is not None:
            self.wire.close()
