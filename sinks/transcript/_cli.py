"""The archive's command line: `corral transcripts ...`.

    corral transcripts list [--limit N] [--json]
    corral transcripts show ID [--color | --no-color]
    corral transcripts export ID [--format html|jsonl|markdown] [-o FILE]
                                            the format: --format, else -o's suffix
                                            (.html .jsonl .md), else html
    corral transcripts search TEXT... [--limit N]
    corral transcripts replay ID            the line protocol again, through the line writer
    corral transcripts serve [--port N]     the archive in a browser (`_viewer/`)

(`corral import` drives the engine, so it lives above sinks, in `actors/importing`.)

Every command takes `--transcripts DIR` (default `$CORRAL_HOME/transcripts`).
An ID may be a unique prefix or part of a transcript id. Reading commands
bring the search index up to date first (which also repairs transcripts a
crash left unfinished). `add_archive_options` / `settings_from_args` give
`serve` and `demo` their `--transcripts DIR`, `--no-transcripts`,
`--no-redact`, `--fsync` and `--record-wire`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import orjson

from ...pipeline.wire import closed_line, event_line, hello_line, session_error_line
from .._color import use_color
from ..lines import LineWriter
from ._archive import TranscriptSettings, corral_version
from ._file import FsyncPolicy
from ._format import ErrorRecord, EventRecord
from ._index import TranscriptIndex
from ._markdown import render_markdown
from ._paths import default_transcripts_dir, files_of
from ._reader import Transcript, read_transcript, split_lines
from ._reader import _load as load_file
from ._render import render_html, render_list, render_show
from ._viewer import register_serve

__all__ = ["add_archive_options", "register_cli", "replay_lines", "settings_from_args"]


class _Fail(Exception):
    """A command that cannot go on: its message goes to stderr, exit status 1."""


def add_archive_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "transcripts", "every session is kept, one JSONL file each, secrets redacted"
    )
    group.add_argument(
        "--transcripts",
        metavar="DIR",
        help="where transcripts go (default: $CORRAL_HOME/transcripts, "
        "i.e. ~/.local/share/corral/transcripts)",
    )
    group.add_argument("--no-transcripts", action="store_true", help="keep no transcripts")
    group.add_argument(
        "--no-redact", action="store_true", help="write secrets to transcripts as they are"
    )
    group.add_argument(
        "--fsync",
        choices=[p.value for p in FsyncPolicy],
        default=FsyncPolicy.TURN.value,
        help="when transcripts reach the disk (default: at every turn end)",
    )
    group.add_argument(
        "--record-wire",
        action="store_true",
        help="also record each agent's raw wire, both directions, redacted (beside the transcript)",
    )


def settings_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> TranscriptSettings | None:
    """What `add_archive_options` asked for; None with `--no-transcripts`."""
    if args.no_transcripts:
        return None
    return TranscriptSettings.from_environ(
        os.environ if environ is None else environ,
        dir=Path(args.transcripts).expanduser() if args.transcripts else None,
        redact=not args.no_redact,
        fsync=FsyncPolicy(args.fsync),
        record_wire=args.record_wire,
    )


def _root(args: argparse.Namespace) -> Path:
    if args.transcripts:
        return Path(args.transcripts).expanduser()
    return default_transcripts_dir(os.environ)


def _open_index(args: argparse.Namespace) -> TranscriptIndex:
    index = TranscriptIndex(_root(args))
    update = index.update()
    for transcript_id in update.repaired:
        print(f"corral: repaired {transcript_id} (it was left unfinished)", file=sys.stderr)
    for problem in update.problems:  # damage and failed repairs: reported, never hidden
        print(f"corral: {problem}", file=sys.stderr)
    return index


def _load(index: TranscriptIndex, wanted: str) -> Transcript:
    matches = index.resolve(wanted)
    if not matches:
        raise _Fail(f"no transcript matches {wanted!r} (see `corral transcripts list`)")
    if len(matches) > 1:
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise _Fail(f"{wanted!r} matches {len(matches)} transcripts: {shown}")
    paths = index.files(matches[0])
    folder = paths[0].parent if paths else index.root
    return read_transcript(files_of(folder / f"{matches[0]}.jsonl"))


# ---- commands ------------------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    with _open_index(args) as index:
        rows = index.summaries(limit=args.limit)
    if args.json:
        for row in rows:
            sys.stdout.write(orjson.dumps(row, default=_as_dict).decode() + "\n")
    else:
        sys.stdout.write(render_list(rows))
    return 0


def _as_dict(value: Any) -> Any:
    return attrs.asdict(value)


def _show(args: argparse.Namespace) -> int:
    with _open_index(args) as index:
        transcript = _load(index, args.id)
    color = use_color(sys.stdout, args.color)
    sys.stdout.write(render_show(transcript, color=color))
    return 1 if transcript.problems else 0


_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".jsonl": "jsonl",
    ".md": "markdown",
    ".markdown": "markdown",
}
EXPORT_FORMATS = ("html", "jsonl", "markdown")


def export_format(output: str | None, wanted: str | None) -> str:
    """`--format`, else what the file name's suffix says, else html."""
    if wanted is not None:
        return wanted
    if output not in (None, "-"):
        suffix = Path(output).suffix.lower()
        if suffix in _SUFFIXES:
            return _SUFFIXES[suffix]
        if suffix:
            known = ", ".join(_SUFFIXES)
            raise _Fail(f"cannot tell the format of {output} ({known}); give --format")
    return "html"


def _jsonl(transcript: Transcript) -> str:
    """The transcript as stored: every complete line, rotated parts joined."""
    lines: list[bytes] = []
    for path in transcript.files.all():
        complete, _ = split_lines(load_file(path))
        lines += [line for line in complete if line.strip()]
    return b"".join(line + b"\n" for line in lines).decode("utf-8", "replace")


def _export(args: argparse.Namespace) -> int:
    chosen = export_format(args.output, "html" if args.html else args.format)
    with _open_index(args) as index:
        transcript = _load(index, args.id)
    render = {"html": render_html, "jsonl": _jsonl, "markdown": render_markdown}[chosen]
    page = render(transcript)
    if args.output in (None, "-"):
        sys.stdout.write(page)
    else:
        Path(args.output).write_text(page, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _search(args: argparse.Namespace) -> int:
    text = " ".join(args.text)
    with _open_index(args) as index:
        hits = list(index.search(text, limit=args.limit))
    for hit in hits:
        where = f"{hit.transcript_id}#{hit.sequence}" if hit.sequence else hit.transcript_id
        sys.stdout.write(f"{where}  {hit.agent}  {hit.role}: {hit.snippet}\n")
    if not hits:
        print(f"corral: nothing found for {text!r}", file=sys.stderr)
        return 1
    return 0


class _Stdout:
    async def write(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


async def replay_lines(transcript: Transcript, writer: LineWriter, *, version: str) -> None:
    """The lines the app saw, again: hello, each event, the session error, `closed`."""
    run = asyncio.ensure_future(writer.run())
    try:
        await writer.reply(hello_line(version))
        for record in transcript.records:
            if isinstance(record, EventRecord):
                await writer.line(event_line(record.event))
            elif isinstance(record, ErrorRecord):
                await writer.line(session_error_line(record.session_id, record.error))
        footer, header = transcript.footer, transcript.header
        if footer is not None and header is not None:
            await writer.line(closed_line(str(footer.raw.get("session") or header.session_id)))
    finally:
        writer.close()
        await run


def _replay(args: argparse.Namespace) -> int:
    with _open_index(args) as index:
        transcript = _load(index, args.id)
    try:
        asyncio.run(replay_lines(transcript, LineWriter(_Stdout()), version=corral_version()))
    except BrokenPipeError:
        return 0
    return 0


# ---- wiring ------------------------------------------------------------------------


def _guarded(command: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            result: int = command(args)
        except _Fail as error:
            print(f"corral: {error}", file=sys.stderr)
            return 1
        return result

    return run


def _with_dir(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "--transcripts", metavar="DIR", help="the archive (default: $CORRAL_HOME/transcripts)"
    )
    return parser


def register_cli(subparsers: Any) -> None:
    """Add `transcripts` to the `corral` command's subparsers."""
    archive = subparsers.add_parser("transcripts", help="the transcript archive")
    commands = archive.add_subparsers(dest="transcripts_command", required=True, metavar="COMMAND")

    listing = _with_dir(commands.add_parser("list", help="a table of the archived sessions"))
    listing.add_argument("--limit", type=int, default=None, help="the newest N only")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(run=_guarded(_list))

    show = _with_dir(commands.add_parser("show", help="one session, readable, in the terminal"))
    show.add_argument("id", metavar="ID")
    show.add_argument("--color", action="store_true", default=None)
    show.add_argument("--no-color", dest="color", action="store_false")
    show.set_defaults(run=_guarded(_show))

    export = _with_dir(
        commands.add_parser("export", help="one session as a file: HTML, JSONL or Markdown")
    )
    export.add_argument("id", metavar="ID")
    form = export.add_mutually_exclusive_group()
    form.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        help="html (a standalone page), jsonl (the transcript as stored), markdown; "
        "default: from -o's suffix (.html, .jsonl, .md), else html",
    )
    form.add_argument("--html", action="store_true", help="the same as --format html")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    export.set_defaults(run=_guarded(_export))

    search = _with_dir(commands.add_parser("search", help="full-text search of the archive"))
    search.add_argument("text", nargs="+", metavar="TEXT")
    search.add_argument("--limit", type=int, default=50)
    search.set_defaults(run=_guarded(_search))

    replay = _with_dir(commands.add_parser("replay", help="write a session's line protocol again"))
    replay.add_argument("id", metavar="ID")
    replay.set_defaults(run=_guarded(_replay))

    register_serve(commands, _root)  # `serve`: the archive in a browser (sinks/transcript/_viewer)
