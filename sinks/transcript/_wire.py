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
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections import Counter
from pathlib import Path

import orjson

from ...pipeline.events import SystemTime
from ._redact import Redactor

__all__ = ["WireRecorder"]

# (session, file, direction, line, ns); direction None: the session ended.
_Item = tuple[str, Path, str | None, bytes, int]


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
        self._thread: threading.Thread | None = None
        self.dropped: Counter[str] = Counter()
        self.written = 0

    # ---- registration (event loop) ---------------------------------------------

    def register(self, session_id: str, path: Path) -> None:
        self._paths[session_id] = path
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="corral-wire", daemon=True)
            self._thread.start()

    def release(self, session_id: str) -> None:
        path = self._paths.pop(session_id, None)
        if path is not None:
            self._items.put((session_id, path, None, b"", 0))

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
        self._items.put((session_id, path, direction, bytes(line), time.time_ns()))

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
                session_id, path, direction, line, at_ns = item
                if direction is None:
                    self._finish(session_id, path, files)
                    continue
                with self._lock:
                    self._queued -= len(line)
                try:
                    fd = files.get(session_id)
                    if fd is None:
                        fd = files[session_id] = self._open(path)
                    self._append(fd, self._record(direction, line, at_ns))
                except OSError:
                    self.dropped[session_id] += 1  # a full disk loses the line, counted
        finally:
            for session_id in list(files):
                self._finish(session_id, None, files)

    def _open(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)

    def _record(self, direction: str, line: bytes, at_ns: int) -> dict[str, object]:
        record: dict[str, object]
        try:
            record = {direction: orjson.loads(line)}
        except orjson.JSONDecodeError:
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            record = {f"{direction}_text": text}
        record["at"] = SystemTime.from_ns(at_ns).to_wire()
        if self._redactor is not None:
            redacted, found = self._redactor.redact(record)
            if found.total:
                redacted["redacted"] = found.mark()
            return dict(redacted)
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
