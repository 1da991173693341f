"""The `corral` command line.

corral serve [--mock NAME|FILE] [--policy FILE] [--metrics HOST:PORT]
             [--handshake-timeout SECONDS] [--max-in-flight N] [--ray ADDRESS]
             [TRANSCRIPT OPTIONS]  the line protocol on stdin/stdout
corral demo [--metrics HOST:PORT | --no-metrics] [TRANSCRIPT OPTIONS]
                               watch mock sessions run, then a summary
corral transcripts list|show|export|search|replay
                               the transcript archive
corral import PATH...          the agents' own transcripts, into the archive
corral bench [--quick] [--json FILE] [--plot DIR [--from-json FILE]]
                               throughput, latency, scale, backpressure vs baselines
corral schema                  print the line-protocol JSON schema
corral policy check|explain    check a permission policy file; say what it would decide
corral agents [--json]         the agents: installed or not, version, where found
corral completion bash|zsh     print the shell completion script
corral --version

Every command runs inside one error boundary (`_cli_errors.guarded`): a
user's mistake is one line on stderr and a meaningful exit status, a bug
keeps its traceback. `serve` takes its defaults from
$CORRAL_HOME/config.toml (`_config`); flags override the file.

TRANSCRIPT OPTIONS: every session of `serve` and `demo` is kept under
$CORRAL_HOME/transcripts (default ~/.local/share/corral/transcripts);
--transcripts DIR, --no-transcripts, --no-redact, --fsync always|turn|never,
--record-wire.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from ._cli_commands import (
    DEMO_METRICS,
    bench_command,
    demo_command,
    run_async,
    serve_command,
    version,
)
from ._cli_errors import EXIT_CODES_HELP, guarded
from ._cli_inputs import shipped_scripts
from ._collector import tune_collector
from ._config import CONFIG_HELP, load_serve_defaults

__all__ = ["main", "run_async", "version"]  # run_async: for `_agents_cli`


def _schema(args: argparse.Namespace) -> int:
    text = resources.files("corral.pipeline").joinpath("schema/line-protocol.schema.json")
    sys.stdout.write(text.read_text(encoding="utf-8"))
    return 0


ENVIRONMENT_HELP = """environment:
  CORRAL_HOME       corral's folder: transcripts/, config.toml
                    (default $XDG_DATA_HOME/corral, i.e. ~/.local/share/corral)
  CORRAL_<AGENT>_BIN  use this executable for an agent (e.g. CORRAL_CLAUDE_BIN)
  CORRAL_BWRAP_BIN  the bubblewrap executable for sandboxed sessions
  NO_COLOR          no colour in any output (colour is only ever used on a terminal)"""

COMPLETION_HELP = """shell completion (bash, zsh):
  eval "$(corral completion bash)"    in ~/.bashrc
  eval "$(corral completion zsh)"     in ~/.zshrc"""


def _epilog(*sections: str) -> str:
    return "\n\n".join(sections)


def build_parser(serve_defaults: Mapping[str, Any] | None = None) -> argparse.ArgumentParser:
    """The whole command line; `serve_defaults` replace `serve`'s built-in defaults."""
    parser = argparse.ArgumentParser(
        prog="corral",
        description="Supervise coding agents: every agent's wire, one event model, nothing lost.",
        epilog=_epilog(EXIT_CODES_HELP, ENVIRONMENT_HELP, CONFIG_HELP, COMPLETION_HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"corral {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="speak the line protocol on stdin/stdout (for apps embedding corral)",
        description="Read commands (one JSON object per line) on stdin; write replies, "
        "events and session lines on stdout. EOF on stdin closes every session and exits 0.",
        epilog=_epilog(CONFIG_HELP, ENVIRONMENT_HELP, EXIT_CODES_HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--mock",
        metavar="NAME|FILE",
        help="offer one agent, `mock`, that plays this JSON script in every session: a file, "
        f"or a shipped script by name ({', '.join(sorted(shipped_scripts()))})",
    )
    serve.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (HOST defaults to "
        "127.0.0.1; port 0 picks a free port; off unless given)",
    )
    serve.add_argument(
        "--policy",
        metavar="FILE",
        help="the permission policy for every session (a TOML file or preset:<Name>); "
        "a session may bring its own with open's `policy`",
    )
    serve.add_argument(
        "--handshake-timeout",
        metavar="SECONDS",
        type=_positive_seconds,
        default=30.0,
        help="how long an agent may take to complete its handshake on open (default 30)",
    )
    serve.add_argument(
        "--max-in-flight",
        metavar="N",
        type=_positive_int,
        default=1024,
        help="commands running at once; past that, corral stops reading stdin until "
        "replies drain (default 1024)",
    )
    serve.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run every session on a node of this Ray cluster (HOST:PORT or auto, as "
        "ray.init takes it; local: a private Ray instance on this machine's cores); "
        "needs corral[ray]",
    )
    _archive_options(serve)
    serve.set_defaults(run=serve_command, **(serve_defaults or {}))

    demo = commands.add_parser(
        "demo", help="watch a few mock sessions run through the whole pipeline, then a summary"
    )
    demo.add_argument(
        "--speed", type=float, default=1.0, help="playback speed factor (default 1; 0 = no pauses)"
    )
    demo.add_argument("--no-color", action="store_true", help="plain text output")
    demo.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        default=DEMO_METRICS,
        help=f"serve Prometheus metrics here while the demo runs (default {DEMO_METRICS}; "
        "a free port if that one is taken)",
    )
    demo.add_argument("--no-metrics", action="store_true", help="do not serve metrics")
    _archive_options(demo)
    demo.set_defaults(run=demo_command)

    bench = commands.add_parser(
        "bench",
        help="measure throughput, latency, scale and backpressure against baselines",
        description="Every figure is measured in this run next to its baseline: the orjson "
        "parsing floor and a naive relay for throughput, a plain relay for latency, the idle "
        "process for memory, the ACP SDK's client for a flood of ACP updates. Takes a few "
        "minutes; --quick takes about one.",
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="smaller runs, scale and backpressure under the first loop only (about a minute)",
    )
    bench.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    bench.add_argument("--plot", metavar="DIR", help="also draw the figures as SVG charts in DIR")
    bench.add_argument(
        "--from-json",
        metavar="FILE",
        help="with --plot: draw the charts of a run saved with --json, without measuring",
    )
    bench.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="instead: the scale phase on this Ray cluster (local: a private instance) "
        "beside the single-process run, in the same run",
    )
    bench.add_argument(
        "--loop",
        choices=("uvloop", "asyncio", "both"),
        default="both",
        help="event loop(s) to measure (default both)",
    )
    bench.set_defaults(run=bench_command)

    schema = commands.add_parser("schema", help="print the line-protocol JSON schema")
    schema.set_defaults(run=_schema)

    completion = commands.add_parser(
        "completion",
        help="print the shell completion script (bash or zsh)",
        description=COMPLETION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    completion.add_argument("shell", choices=("bash", "zsh"))
    completion.set_defaults(run=_completion)

    from ._agents_cli import register_cli as register_agents_cli

    register_agents_cli(commands)

    from .policy_cli import register_cli

    register_cli(commands)
    from ..sinks.transcript import register_cli as register_archive_cli

    register_archive_cli(commands)
    from .importing import register_cli as register_import_cli

    register_import_cli(commands)
    return parser


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def _archive_options(parser: argparse.ArgumentParser) -> None:
    from ..sinks.transcript import add_archive_options

    add_archive_options(parser)


def _completion(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["corral"], shell=args.shell))
    return 0


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, over `serve`'s config file defaults, over the built-in ones."""
    parser = build_parser()
    import argcomplete

    argcomplete.autocomplete(parser)  # answers a completing shell, then exits; else nothing
    args = parser.parse_args(argv)
    if args.command != "serve":
        return args
    defaults = load_serve_defaults(os.environ).as_defaults()
    if not defaults:
        return args
    # Parse again with the file's values as the defaults: a flag given still wins.
    return build_parser(serve_defaults=defaults).parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """`corral ...`; the status to exit with (see EXIT_CODES_HELP)."""

    def run() -> int:
        tune_collector()
        args = _parse(argv)
        result: int = args.run(args)
        return result

    return guarded(run)


if __name__ == "__main__":
    sys.exit(main())
