"""The mock model HTTP server: an asyncio loop in a background thread.

`MockModelServer` binds 127.0.0.1 (port 0 by default), serves each
connection with keep-alive, and answers every request from the request
alone (see `_routes.plan`). Each request is appended to a thread-safe log of
`RecordedRequest`s before its answer is written; when the answer ends, the
request's outcome becomes `completed` or `aborted` (the client went away).
Tests wait on that log with `wait_for_request` / `wait_for_outcome` instead
of sleeping.

Streamed answers are SSE in a chunked body. During a `Pause` the server
waits on the client socket, so a client that disconnects ends a slow stream
at once. `stop()` closes the listener, cancels every connection task, and
joins the thread; it is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ._http import LAST_CHUNK, HttpError, HttpRequest, RequestParser, encode_chunk, encode_head
from ._routes import Plan, plan
from ._wire import Pause, Step

__all__ = ["MODEL_APIS", "ClientGoneError", "MockModelServer", "Outcome", "RecordedRequest"]

Outcome = Literal["pending", "completed", "aborted"]
MODEL_APIS = frozenset(
    {"anthropic.messages", "openai.responses", "openai.chat", "gemini.stream", "gemini.generate"}
)
_READ_SIZE = 65536


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """One request as the mock saw it, and what it chose to answer.

    `api` names the endpoint (`anthropic.messages`, `openai.responses`,
    `openai.chat`, `gemini.stream`, `gemini.generate`, `models`, `health`,
    `not_found`, ...); `reply` is the answer's kind (`text`, `side`, `slow`,
    `shell`, `write`, `ask`, `structured`, `no_tool`, `error`, ...); `tool`
    the tool called, and `answer` the answer's text or the call's arguments.
    """

    index: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    api: str
    status: int
    reply: str
    tool: str | None
    answer: str | None


class _RequestLog:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._outcomes: list[Outcome] = []

    def add(self, request: HttpRequest, chosen: Plan) -> int:
        with self._changed:
            index = len(self._requests)
            self._requests.append(
                RecordedRequest(
                    index=index,
                    method=request.method,
                    path=request.path,
                    query=request.query,
                    headers=dict(request.headers),
                    body=chosen.body,
                    api=chosen.api,
                    status=chosen.status,
                    reply=chosen.label,
                    tool=chosen.tool,
                    answer=chosen.text,
                )
            )
            self._outcomes.append("pending")
            self._changed.notify_all()
            return index

    def finish(self, index: int, outcome: Outcome) -> None:
        with self._changed:
            self._outcomes[index] = outcome
            self._changed.notify_all()

    def snapshot(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._requests)

    def outcome(self, index: int) -> Outcome:
        with self._changed:
            return self._outcomes[index]

    def wait_for_request(
        self, predicate: Callable[[RecordedRequest], bool], timeout: float
    ) -> RecordedRequest:
        found: list[RecordedRequest] = []

        def ready() -> bool:
            found[:] = [r for r in self._requests if predicate(r)][:1]
            return bool(found)

        with self._changed:
            if not self._changed.wait_for(ready, timeout):
                raise TimeoutError(f"no matching request within {timeout}s")
        return found[0]

    def wait_for_outcome(self, index: int, timeout: float) -> Outcome:
        with self._changed:
            if not self._changed.wait_for(lambda: self._outcomes[index] != "pending", timeout):
                raise TimeoutError(f"request {index} still pending after {timeout}s")
            return self._outcomes[index]


class ClientGoneError(Exception):
    """The client closed its connection while an answer was being streamed."""


class MockModelServer:
    """A stateless mock of the model APIs, served from a background thread."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, slow_pause: float = 1.0) -> None:
        self._host = host
        self._requested_port = port
        self._slow_pause = slow_pause
        self._log = _RequestLog()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._port = 0
        self._connections: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}

    # -- lifecycle ---------------------------------------------------------------

    def start(self, *, timeout: float = 10.0) -> MockModelServer:
        if self._thread is not None:
            raise RuntimeError("MockModelServer already started")
        self._thread = threading.Thread(target=self._run_thread, name="mockmodel", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("mock model server did not start")
        if self._startup_error is not None:
            raise RuntimeError("mock model server failed to start") from self._startup_error
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        loop, stopping, thread = self._loop, self._stopping, self._thread
        if loop is not None and stopping is not None and not loop.is_closed():
            # The loop may close between the check and the call.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopping.set)
        if thread is not None:
            thread.join(timeout)

    def __enter__(self) -> MockModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- what tests read ---------------------------------------------------------

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, with no trailing slash and no `/v1`."""
        return f"http://{self._host}:{self._port}"

    def requests(self) -> list[RecordedRequest]:
        return self._log.snapshot()

    def model_requests(self) -> list[RecordedRequest]:
        """Requests to a model endpoint (not health, model lists or token counts)."""
        return [r for r in self.requests() if r.api in MODEL_APIS]

    def outcome(self, index: int) -> Outcome:
        return self._log.outcome(index)

    def wait_for_request(
        self, predicate: Callable[[RecordedRequest], bool], *, timeout: float = 30.0
    ) -> RecordedRequest:
        return self._log.wait_for_request(predicate, timeout)

    def wait_for_outcome(self, index: int, *, timeout: float = 30.0) -> Outcome:
        return self._log.wait_for_outcome(index, timeout)

    # -- the event loop thread ---------------------------------------------------

    def _run_thread(self) -> None:
        try:
            asyncio.run(self._listen())
        except BaseException as error:  # surfaced by start(); never silent
            self._startup_error = error
            self._ready.set()
            raise

    async def _listen(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._on_connection, self._host, self._requested_port)
        self._port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            await self._close_connections()
            await server.wait_closed()

    async def _close_connections(self) -> None:
        # Closing each transport ends its handler through EOF. Cancelling the
        # handler task instead trips a Python 3.11 asyncio bug (the stream's
        # done-callback calls task.exception() on a cancelled task).
        for writer in self._connections.values():
            writer.close()
        tasks = set(self._connections)
        if tasks:
            _, stuck = await asyncio.wait(tasks, timeout=5.0)
            for task in stuck:
                task.cancel()

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            await self._serve_connection(_Connection(reader=reader, writer=writer))
        except (ConnectionError, ClientGoneError, HttpError):
            pass  # the client went away or broke HTTP; the request log says so
        finally:
            self._connections.pop(task, None)
            writer.close()

    async def _serve_connection(self, connection: _Connection) -> None:
        while (request := await connection.next_request()) is not None:
            chosen = plan(request, slow_pause=self._slow_pause, response_id=uuid.uuid4().hex[:24])
            index = self._log.add(request, chosen)
            outcome: Outcome = "aborted"
            try:
                if chosen.steps is None:
                    head_only = request.method == "HEAD"
                    await connection.send_json(chosen.status, chosen.json_body, head_only=head_only)
                else:
                    await connection.send_stream(chosen.status, chosen.steps)
                outcome = "completed"
            finally:
                self._log.finish(index, outcome)
            if not request.keep_alive:
                return


class _Connection:
    """One client connection: parsed requests in, answers out."""

    def __init__(self, *, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._parser = RequestParser()
        self._pending: deque[HttpRequest] = deque()
        self._keep_alive = True

    async def next_request(self) -> HttpRequest | None:
        """The next request, or None when the client closed cleanly."""
        while not self._pending:
            incoming = await self._reader.read(_READ_SIZE)
            if not incoming:
                return None
            try:
                self._pending.extend(self._parser.feed(incoming))
            except HttpError as error:
                self._keep_alive = False
                await self.send_json(error.status, {"error": error.detail})
                raise
        request = self._pending.popleft()
        self._keep_alive = request.keep_alive
        return request

    def _connection_header(self) -> str:
        return "keep-alive" if self._keep_alive else "close"

    async def send_json(self, status: int, answer: Any, *, head_only: bool = False) -> None:
        encoded = json.dumps(answer).encode()
        headers = {
            "Content-Type": "application/json",
            "Content-Length": str(len(encoded)),
            "Connection": self._connection_header(),
        }
        self._writer.write(encode_head(status, headers) + (b"" if head_only else encoded))
        await self._writer.drain()

    async def send_stream(self, status: int, steps: Iterable[Step]) -> None:
        headers = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
            "Connection": self._connection_header(),
        }
        self._writer.write(encode_head(status, headers))
        await self._writer.drain()
        for step in steps:
            if isinstance(step, Pause):
                await self._pause_unless_gone(step.seconds)
                continue
            self._writer.write(encode_chunk(step.encode()))
            await self._writer.drain()
        self._writer.write(LAST_CHUNK)
        await self._writer.drain()

    async def _pause_unless_gone(self, seconds: float) -> None:
        """Wait `seconds`, but raise `ClientGoneError` as soon as the client hangs up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0:
            try:
                async with asyncio.timeout(left):
                    incoming = await self._reader.read(_READ_SIZE)
            except TimeoutError:
                return
            if not incoming:
                raise ClientGoneError()
            self._pending.extend(self._parser.feed(incoming))  # pipelined; answered later
