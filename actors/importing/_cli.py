"""The `corral import PATH... [--progress] [--no-redact] [--transcripts DIR]` command.

Imports every file given (and every `*.jsonl` under each folder) into the
archive, prints one outcome per file, brings the search index up to date
when anything was imported, and exits 1 when a file failed.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path
from typing import Any

from ...sinks.transcript import TranscriptIndex, TranscriptSettings
from ._importer import Progress, import_paths

__all__ = ["register_cli"]


def _import(args: argparse.Namespace) -> int:
    settings = TranscriptSettings.from_environ(
        os.environ,
        dir=Path(args.transcripts).expanduser() if args.transcripts else None,
        redact=not args.no_redact,
    )
    for path in args.paths:  # a path that is not there is the user's mistake: say so, exit 1
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    show_progress = args.progress or sys.stderr.isatty()
    report = import_paths(
        [Path(p) for p in args.paths],
        root=settings.dir,
        settings=settings.writer_settings(),
        progress=lambda total: Progress(total, enabled=show_progress),
    )
    sys.stdout.write(report.render())
    if report.imported:
        with TranscriptIndex(settings.dir) as index:
            index.update()
    return 1 if report.failed else 0


def register_cli(subparsers: Any) -> None:
    """Add `import` to the `corral` command's subparsers."""
    importing = subparsers.add_parser(
        "import",
        help="import Claude Code, Codex, Copilot, Gemini, opencode sessions and wire recordings",
    )
    importing.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    importing.add_argument(
        "--transcripts", metavar="DIR", help="the archive (default: $CORRAL_HOME/transcripts)"
    )
    importing.add_argument("--progress", action="store_true", help="show progress (even off a TTY)")
    importing.add_argument("--no-redact", action="store_true", help="import secrets as they are")
    importing.set_defaults(run=_import)
