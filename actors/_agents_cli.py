"""`corral agents [--json]`: the catalog, what is installed, its version, where it was found.

Discovery is the Runtime's own (`Runtime.discover`, the `AgentFinder` that
`open` uses), so the table says exactly what `open` would find. Each
installed agent is then probed, all at once, for its version; an agent
that cannot say (it hangs, exits, prints nothing) shows `?` and the reason,
and never hides the others. Missing agents are listed with their install
hint. Exit 0 whatever is installed: a missing agent is information, not a
failure of the command.

`--json` prints one object: `{"agents": [{"id", "name", "installed",
"version", "path", "found", "problem", "install_hint"}...]}`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

import attrs
import orjson

from ..pipeline.errors import CorralError
from ..pipeline.events import AgentInstallation, DiscoveryReport

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["register_cli"]

_PROBE_TIMEOUT = 20.0


@attrs.frozen(kw_only=True)
class AgentRow:
    id: str
    name: str
    installed: bool
    version: str | None = None
    path: str | None = None
    found: str | None = None  # how: Path, EnvOverride, VersionManager...
    problem: str | None = None  # why the version is unknown
    install_hint: str | None = None


async def _probe(runtime: Runtime, agent: AgentInstallation) -> AgentRow:
    row = AgentRow(
        id=agent.id,
        name=agent.name,
        installed=True,
        path=agent.executable_path,
        found=agent.source.value,
    )
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT):
            details = await runtime.agents.probe(agent.id)
    except TimeoutError:
        return attrs.evolve(row, problem=f"no answer within {_PROBE_TIMEOUT:g} s")
    except CorralError as error:
        return attrs.evolve(row, problem=error.message)
    return attrs.evolve(row, version=details.version)


async def agent_rows() -> list[AgentRow]:
    """Every catalog agent: the installed ones probed, then the missing ones."""
    from .runtime import Runtime

    async with Runtime(transcripts=False) as runtime:
        report: DiscoveryReport = await runtime.discover()
        async with asyncio.TaskGroup() as probes:
            tasks = [probes.create_task(_probe(runtime, agent)) for agent in report.agents]
    rows = [task.result() for task in tasks]
    rows += [
        AgentRow(id=m.id, name=m.name, installed=False, install_hint=m.install_hint)
        for m in report.missing
    ]
    return rows


def render_table(rows: list[AgentRow]) -> str:
    table = [("AGENT", "NAME", "VERSION", "FOUND", "WHERE")]
    for row in rows:
        if row.installed:
            version = row.version or "?"
            table.append((row.id, row.name, version, row.found or "", row.path or ""))
        else:
            table.append((row.id, row.name, "-", "missing", row.install_hint or ""))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]]).rstrip()
        for line in table
    ]
    notes = [f"{row.id}: version unknown: {row.problem}" for row in rows if row.problem]
    return "\n".join(lines + notes) + "\n"


def _agents(args: argparse.Namespace) -> int:
    from .cli import run_async

    async def main() -> int:
        rows = await agent_rows()
        if args.json:
            agents = [attrs.asdict(row) for row in rows]
            sys.stdout.write(orjson.dumps({"agents": agents}).decode() + "\n")
        else:
            sys.stdout.write(render_table(rows))
        return 0

    return run_async(main)


def register_cli(subparsers: Any) -> None:
    """Add `agents` to the `corral` command's subparsers."""
    agents = subparsers.add_parser(
        "agents",
        help="list the agents corral knows: installed or not, version, where found",
        description="Every agent of the catalog: whether it is installed, its version and "
        "where it was found (or how to install it). The same discovery `open` uses.",
    )
    agents.add_argument("--json", action="store_true", help="print one JSON object")
    agents.set_defaults(run=_agents)
