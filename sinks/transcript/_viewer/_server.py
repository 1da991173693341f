"""Running the viewer: which address it may bind, serving until a signal.

Loopback only unless asked: any other address (a LAN address, `0.0.0.0`)
would show every archived session, prompts and tool output included, to
whoever can reach the port, so it needs `--allow-remote`, and even then a
warning goes to stderr. The address served is printed on stderr once the
socket is bound (`--port 0` picks a free port; the line says which).
"""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import sys

from aiohttp import web

from ._app import ViewerSettings, make_app

__all__ = ["RemoteRefused", "check_host", "run_viewer"]


class RemoteRefused(Exception):
    """A non-loopback address without `--allow-remote`."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, *, allow_remote: bool) -> str | None:
    """None if `host` may be served; else the warning (allowed) — or RemoteRefused."""
    if is_loopback(host):
        return None
    if not allow_remote:
        raise RemoteRefused(
            f"refusing to serve the archive on {host}: only loopback (127.0.0.1) by default; "
            "--allow-remote serves it to anyone who can reach that address"
        )
    return (
        f"warning: serving the archive on {host}: anyone who can reach this address can read "
        "every archived session, with no authentication"
    )


async def _serve(settings: ViewerSettings, host: str, port: int) -> None:
    runner = web.AppRunner(make_app(settings), handle_signals=False, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in str(bound[0]) else bound[0]
        print(
            f"corral: serving the archive {settings.root} at http://{shown}:{bound[1]}/ "
            "(read-only; Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def run_viewer(settings: ViewerSettings, *, host: str, port: int) -> int:
    try:
        asyncio.run(_serve(settings, host, port))
    except OSError as error:
        print(f"corral: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0
