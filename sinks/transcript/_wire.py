"""Raw wire recording (opt-in): every line each agent sent and received, redacted.

A telemetry `Observer`: drivers call `wire_line(session, direction, line)`
from the event loop, synchronously, so the recorder must never block. It
queues the raw bytes (bounded, by bytes) and one worker thread redacts and
appends them to `<transcript id>.wire.jsonl` beside the session's transcript,
in the shape the recorded-wire replays read (`sources/acp/_replay.py`):

    {"in": <message>, "at": SystemTime}        a JSON line from the agent ("out": to it)
    {"in_text": "<line>", "at": SystemTime}    a line that is not JSON, kept as text
    {"dropped": n}        lines lost because the queue was full (counted, never silent)

This is the one lossy path of the archive, on purpose: recording the wire
must not slow the agent. Every loss is counted in the file and in `dropped`.
Sessions are registered by the archive when their transcript sink is made,
and released when that sink ends.

Redaction is the transcript's. Each string of a message is redacted as
part of a stream: the strings found at the same place (direction and key
path, `in/event/delta/text`) in the session's earlier messages, as the
transcript redacts streamed deltas (`_streams.py`), since agents stream
text a few characters per message and a key the model echoes is split
across messages, none of which looks like a key alone. Then the message is
redacted whole (secret-named fields). A session's own secrets
(`learn_secrets`: the values of its secret-named `env`) are masked too.
The streams a session keeps are bounded (`_STREAMS`; the least recently
used is forgotten).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import orjson

from ...pipeline.events import SystemTime
from ._redact import Redaction, Redactor, _secret_key
from ._streams import DeltaRedactor

__all__ = ["WireRecorder"]

_STREAMS = 64  # key paths of one session redacted as streams (least recently used goes)


@attrs.frozen
class _Line:
    session_id: str
    path: Path
    direction: str
    line: bytes
    at_ns: int


@attrs.frozen
class _Known:
    session_id: str
    values: tuple[str, ...]


@attrs.frozen
class _End:
    session_id: str
    path: Path


_Item = _Line | _Known | _End


class _SessionRedaction:
    """One session's redaction: each string as part of its stream, then the whole message."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._deltas = DeltaRedactor(known=redactor.known)
        self._streams: dict[str, None] = {}  # in the order last used

    def redact(self, record: dict[str, object]) -> dict[str, object]:
        # The streams see the raw text, as the transcript's do: a secret's first part,
        # already masked in its own message, still joins the next message's rest.
        found = Redaction()
        streamed = self._walk(record, "", found)
        redacted: dict[str, object] = self._redactor.redact(streamed, found)[0]
        if found.total:
            redacted["redacted"] = found.mark()
        return redacted

    def _walk(self, value: Any, path: str, found: Redaction) -> Any:
        if isinstance(value, str):
            return self._stream(path, value, found)
        if isinstance(value, list):
            return [self._walk(item, path, found) for item in value]
        if isinstance(value, dict):
            return {
                # A secret-named field is masked whole by the redactor: no stream needed.
                key: item if _secret_key(key) else self._walk(item, f"{path}/{key}", found)
                for key, item in value.items()
            }
        return value

    def _stream(self, path: str, text: str, found: Redaction) -> str:
        streams = self._streams
        streams.pop(path, None)
        streams[path] = None
        if len(streams) > _STREAMS:
            oldest = next(iter(streams))
            del streams[oldest]
            self._deltas.end(oldest)
        return self._deltas.redact(path, text, found)


class WireRecorder:
    """A telemetry Observer writing each registered session's raw wire to a file."""

    def __init__(
        self, *, redactor: Redactor | None, capacity_bytes: int = 16 * 1024 * 1024
    ) -> None:
        self._redactor = redactor
        self._capacity = capacity_bytes
        self._queued = 0
        self._lock = threading.Lock()
        self._paths: dict[str, Path] = {}
        self._items: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._redactions: dict[str, _SessionRedaction] = {}  # the worker thread's
        self._thread: threading.Thread | None = None
        self.dropped: Counter[str] = Counter()
        self.written = 0

    # ---- registration (event loop) ---------------------------------------------

    def register(self, session_id: str, path: Path) -> None:
        self._paths[session_id] = path
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="corral-wire", daemon=True)
            self._thread.start()

    def learn_secrets(self, session_id: str, values: tuple[str, ...]) -> None:
        """Mask these values (the session's own secrets) in its lines from now on."""
        if session_id in self._paths and values:
            self._items.put(_Known(session_id, tuple(values)))

    def release(self, session_id: str) -> None:
        path = self._paths.pop(session_id, None)
        if path is not None:
            self._items.put(_End(session_id, path))

    def close(self) -> None:
        if self._thread is not None:
            self._items.put(None)
            self._thread.join()
            self._thread = None

    # ---- Observer ----------------------------------------------------------------

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        path = self._paths.get(session_id)
        if path is None:
            return
        with self._lock:
            if self._queued + len(line) > self._capacity:
                self.dropped[session_id] += 1
                return
            self._queued += len(line)
        self._items.put(_Line(session_id, path, direction, bytes(line), time.time_ns()))

    def process_started(self, agent: str) -> None:
        pass

    def process_exited(self, agent: str, status: str) -> None:
        pass

    def process_restarted(self, agent: str) -> None:
        pass

    def decode_error(self, agent: str, kind: str) -> None:
        pass

    def unknown_frame(self, agent: str) -> None:
        pass

    # ---- the worker thread -------------------------------------------------------

    def _work(self) -> None:
        files: dict[str, int] = {}
        try:
            while (item := self._items.get()) is not None:
                match item:
                    case _Line():
                        self._write_line(item, files)
                    case _Known(session_id=session_id, values=values):
                        if self._redactor is not None:
                            known = self._redactor.knowing(values)
                            self._redactions[session_id] = _SessionRedaction(known)
                    case _End(session_id=session_id, path=path):
                        self._redactions.pop(session_id, None)
                        self._finish(session_id, path, files)
        finally:
            for session_id in list(files):
                self._finish(session_id, None, files)

    def _write_line(self, item: _Line, files: dict[str, int]) -> None:
        with self._lock:
            self._queued -= len(item.line)
        try:
            fd = files.get(item.session_id)
            if fd is None:
                fd = files[item.session_id] = self._open(item.path)
            self._append(fd, self._record(item))
        except OSError:
            self.dropped[item.session_id] += 1  # a full disk loses the line, counted

    def _open(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)

    def _record(self, item: _Line) -> dict[str, object]:
        record: dict[str, object]
        try:
            record = {item.direction: orjson.loads(item.line)}
        except orjson.JSONDecodeError:
            text = item.line.decode("utf-8", "replace").rstrip("\r\n")
            record = {f"{item.direction}_text": text}
        if self._redactor is not None:
            redaction = self._redactions.get(item.session_id)
            if redaction is None:
                redaction = self._redactions[item.session_id] = _SessionRedaction(self._redactor)
            record = redaction.redact(record)
        record["at"] = SystemTime.from_ns(item.at_ns).to_wire()
        return record

    def _append(self, fd: int, record: dict[str, object]) -> None:
        data = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        while data:
            data = data[os.write(fd, data) :]
        self.written += 1

    def _finish(self, session_id: str, path: Path | None, files: dict[str, int]) -> None:
        """Close a session's file, writing how many lines were lost (if any)."""
        dropped = self.dropped.get(session_id, 0)
        fd = files.pop(session_id, None)
        try:
            if fd is None and dropped and path is not None:
                fd = self._open(path)  # every line was lost: the file says so
            if fd is not None and dropped:
                self._append(fd, {"dropped": dropped})
        except OSError:
            pass  # the count stays in `dropped`; the disk refuses even that
        finally:
            if fd is not None:
                os.close(fd)
