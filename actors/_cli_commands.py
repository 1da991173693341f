"""What `corral serve`, `corral demo` and `corral bench` do once parsed.

The long-running commands of the command line (`cli.py` builds the parser
and runs the one asked for inside its error boundary): each reads its
inputs first (a bad mock script, policy or address is a usage error before
anything starts), then runs one event loop (`run_async`: uvloop where it is
installed) around the Runtime, the demo or the benchmarks, with the metrics
endpoint and the transcript archive they were asked for, closed on the way
out whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ._cli_errors import UsageError
from ._cli_inputs import load_mock, load_policy_arg, metrics_address, require_posix

if TYPE_CHECKING:
    from ..sinks.metrics import Metrics, MetricsServer
    from ..sinks.transcript import TranscriptSettings

__all__ = [
    "DEMO_METRICS",
    "bench_command",
    "demo_command",
    "run_async",
    "serve_command",
    "start_metrics",
    "transcripts_of",
    "version",
]

DEMO_METRICS = "127.0.0.1:9464"


def version() -> str:
    try:
        return metadata.version("corral")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def run_async(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run on uvloop where it is available, else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main())
    return uvloop.run(main())


async def start_metrics(
    address: tuple[str, int] | None, *, fallback: bool = False
) -> tuple[Metrics | None, MetricsServer | None]:
    """(metrics, server) serving on `address`, or (None, None) when off.

    With `fallback`, an address in use falls back to any free port (the demo's
    default must never stop the demo); otherwise it is a clear error.
    """
    if address is None:
        return None, None
    from ..sinks.metrics import Metrics, MetricsServerError

    metrics = Metrics(version=version())
    try:
        server = await metrics.serve_http(*address)
    except MetricsServerError as error:
        if not fallback:
            raise SystemExit(f"corral: {error}") from None
        server = await metrics.serve_http(address[0], 0)
    print(f"corral: metrics on {server.url}", file=sys.stderr, flush=True)
    return metrics, server


def transcripts_of(args: argparse.Namespace) -> TranscriptSettings | None:
    """The archive `--transcripts`, `--no-transcripts`... asked for (None: none)."""
    from ..sinks.transcript import settings_from_args

    return settings_from_args(args)


def serve_command(args: argparse.Namespace) -> int:
    require_posix("serve")
    from .runtime import Runtime, RuntimeSettings
    from .server import ServeSettings, serve
    from .stdio import open_stdio

    script = load_mock(args.mock)
    policy = load_policy_arg(args.policy)
    address = metrics_address(args.metrics)
    transcripts = transcripts_of(args)
    settings = RuntimeSettings(handshake_timeout=args.handshake_timeout)
    serve_settings = ServeSettings(max_in_flight=args.max_in_flight)

    protocol_out = None
    if args.ray is not None:
        from .cluster import private_stdout, ray_missing

        if ray_missing():
            raise UsageError("--ray needs Ray: pip install 'corral[ray]'")
        protocol_out = private_stdout()  # Ray and what it loads may print: only on stderr

    async def main() -> int:
        metrics, server = await start_metrics(address)
        try:
            stdin, stdout = await open_stdio(stdout=protocol_out)
            return await serve(
                stdin=stdin,
                stdout=stdout,
                version=version(),
                make_runtime=lambda: Runtime(
                    mock=script,
                    policy=policy,
                    metrics=metrics,
                    transcripts=transcripts or False,
                    settings=settings,
                    ray=args.ray,
                ),
                metrics=metrics,
                settings=serve_settings,
            )
        finally:
            if server is not None:
                await server.aclose()

    return run_async(main)


def demo_command(args: argparse.Namespace) -> int:
    require_posix("demo")
    from ..sinks.transcript import Archive
    from .demo import run_demo

    address = None if args.no_metrics else metrics_address(args.metrics)
    transcripts = transcripts_of(args)
    created = 0

    async def main() -> int:
        nonlocal created
        metrics, server = await start_metrics(address, fallback=args.metrics == DEMO_METRICS)
        # The demo's own archive, so it can say afterwards whether anything was kept.
        archive = None if transcripts is None else Archive(transcripts, metrics=metrics)
        try:
            return await run_demo(
                speed=args.speed,
                color=not args.no_color,
                metrics=metrics,
                transcripts=archive if archive is not None else False,
            )
        finally:
            if archive is not None:
                await asyncio.to_thread(archive.close)  # pending writes land
                created = archive.created
            if server is not None:
                await server.aclose()

    status = run_async(main)
    if transcripts is not None and created:
        print(
            f"corral: transcripts in {transcripts.dir} (see `corral transcripts list`)",
            file=sys.stderr,
        )
    return status


def _ray_bench(args: argparse.Namespace) -> int:
    from .bench._ray import figures, print_table, run_ray_bench
    from .bench._run import write_json
    from .cluster import ray_missing

    if ray_missing():
        raise UsageError("--ray needs Ray: pip install 'corral[ray]'")
    rows = run_ray_bench(args.ray, quick=args.quick)
    print_table(rows, sys.stdout)
    if args.json:
        write_json({"ray_scale": figures(rows)}, args.json)
    return 0


def bench_command(args: argparse.Namespace) -> int:
    from ..sinks.metrics import Metrics
    from .bench import BenchOptions, run_bench
    from .bench._plots import require_plotting, write_charts
    from .bench._run import read_json, write_json

    if args.from_json and not args.plot:
        raise UsageError("--from-json re-plots a saved run: give --plot DIR too")
    if args.plot:
        require_plotting()  # now, not after minutes of measuring
    if args.from_json:
        return write_charts(read_json(args.from_json), args.plot)
    if args.ray is not None:
        return _ray_bench(args)
    loops = ("uvloop", "asyncio") if args.loop == "both" else (args.loop,)

    def sinks() -> list[Any]:
        # The full pipeline: the line writer is the app's sink; add metrics.
        return [Metrics(version=version()).sink]

    report = run_bench(BenchOptions(quick=args.quick, loops=loops, sinks=sinks))
    if args.json:
        write_json(report, args.json)
        print(f"corral: figures written to {args.json}", file=sys.stderr)
    return write_charts(report, args.plot) if args.plot else 0
