"""`corral transcripts serve [--port N] [--host H] [--allow-remote]`, registered lazily.

The server's libraries (aiohttp, Jinja2) are the optional `viewer` extra:
they are imported when the command runs, and their absence is one line on
stderr saying how to install them, exit status 1, no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["INSTALL_HINT", "register_serve"]

INSTALL_HINT = (
    "corral: `transcripts serve` needs the viewer extra: pip install 'corral[viewer]' "
    "(aiohttp and Jinja2)"
)
_EXTRA = frozenset({"aiohttp", "jinja2", "markupsafe", "multidict", "yarl"})


def _serve(root: Callable[[argparse.Namespace], Path]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            from ._app import ViewerSettings
            from ._server import RemoteRefused, check_host, run_viewer
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] not in _EXTRA:
                raise
            print(INSTALL_HINT, file=sys.stderr)
            return 1
        try:
            warning = check_host(args.host, allow_remote=args.allow_remote)
        except RemoteRefused as refused:
            print(f"corral: {refused}", file=sys.stderr)
            return 1
        if warning is not None:
            print(f"corral: {warning}", file=sys.stderr)
        settings = ViewerSettings(root=root(args), loopback_only=warning is None)
        return run_viewer(settings, host=args.host, port=args.port)

    return run


def register_serve(commands: Any, root: Callable[[argparse.Namespace], Path]) -> None:
    """Add `serve` to `corral transcripts`; `root` gives the archive from the arguments."""
    serve = commands.add_parser("serve", help="browse the archive: a local, read-only web viewer")
    serve.add_argument(
        "--transcripts", metavar="DIR", help="the archive (default: $CORRAL_HOME/transcripts)"
    )
    serve.add_argument("--port", type=int, default=8765, help="default 8765; 0 picks a free one")
    serve.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (loopback only)")
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="serve on a non-loopback address: anyone reaching it reads the whole archive",
    )
    serve.set_defaults(run=_serve(root))
