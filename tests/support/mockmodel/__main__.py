"""Run the mock model server by hand: ``python -m tests.support.mockmodel --port N``.

Prints the base URL, then one line per request (api, reply kind, tool) until
interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable

from ._server import MockModelServer, RecordedRequest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.mockmodel")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--slow-pause", type=float, default=1.0, help="seconds per slow delta")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with MockModelServer(host=args.host, port=args.port, slow_pause=args.slow_pause) as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            _print_requests(server, stop)
    return 0


def _from_index(first: int) -> Callable[[RecordedRequest], bool]:
    return lambda request: request.index >= first


def _print_requests(server: MockModelServer, stop: threading.Event) -> None:
    seen = 0
    while not stop.is_set():
        try:
            request = server.wait_for_request(_from_index(seen), timeout=0.5)
        except TimeoutError:
            continue
        seen = request.index + 1
        print(
            f"{request.index} {request.method} {request.path} -> {request.api}"
            f" {request.status} {request.reply} {request.tool or ''}",
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
