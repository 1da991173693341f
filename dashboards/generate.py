"""Write corral's Grafana dashboards (classic JSON model) next to this file.

    .venv/bin/python dashboards/generate.py        # rewrites dashboards/corral-*.json

The JSON files are what an operator imports (Dashboards > New > Import) or
provisions (see provisioning/); this script keeps them consistent (see
`_grafana`). tests/integration/test_dashboards.py lints the files (a
datasource variable, job/instance/agent variables, a unit and a description
on every panel, `$__rate_interval` in rates), checks that every expression
parses and every metric exists, and that the files match this script.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _grafana import Board
from _health import pipeline, processes
from _usage import overview, tools

HERE = Path(__file__).resolve().parent


BOARDS: dict[str, tuple[Callable[[], Board], list[str]]] = {
    "corral-overview.json": (overview, ["overview"]),
    "corral-tools.json": (tools, ["tools", "permissions"]),
    "corral-pipeline.json": (pipeline, ["pipeline"]),
    "corral-processes.json": (processes, ["processes"]),
}


def render() -> dict[str, str]:
    """File name -> JSON text, exactly as committed."""
    return {
        name: json.dumps(build().to_json(tags), indent=2) + "\n"
        for name, (build, tags) in BOARDS.items()
    }


def main() -> int:
    for name, text in render().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote dashboards/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
