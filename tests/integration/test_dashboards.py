"""The Grafana dashboards: generated, linted, every query parses, every metric exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.sinks.metrics import Metrics

from tests.unit.metrics.promtools import (
    DASHBOARDS,
    concrete,
    dashboard_queries,
    dashboards,
    prometheus_bin,
)

BOARDS = dashboards()
PANELS = [
    (name, panel)
    for name, board in BOARDS.items()
    for panel in board["panels"]
    if panel["type"] != "row"
]
QUERIES = dashboard_queries()
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SELECTOR = re.compile(r"(corral_[a-z_]+)(\{[^}]*\})?")
RANGE = re.compile(r"\[([^\]]*)\]")
METRICS = Metrics(version="test")
AGENT_LABELLED = {
    name
    for family in METRICS.families.store.families
    if "agent" in family.labelnames
    for name in family.sample_names
}


def panel_id(case: tuple[str, dict[str, Any]]) -> str:
    return f"{case[0]}:{case[1]['title']}"


def test_the_files_are_what_the_generator_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", DASHBOARDS / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    rendered = generate.render()
    assert sorted(rendered) == sorted(BOARDS)
    for name, text in rendered.items():
        on_disk = (DASHBOARDS / name).read_text(encoding="utf-8")
        assert text == on_disk, f"{name} is stale: run .venv/bin/python dashboards/generate.py"


def test_the_four_dashboards_exist_with_distinct_uids() -> None:
    assert sorted(BOARDS) == [
        "corral-overview.json",
        "corral-pipeline.json",
        "corral-processes.json",
        "corral-tools.json",
    ]
    uids = [board["uid"] for board in BOARDS.values()]
    assert len(set(uids)) == len(uids)


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_a_dashboard_is_in_the_classic_json_model(name: str) -> None:
    board = BOARDS[name]
    assert isinstance(board["schemaVersion"], int) and board["schemaVersion"] >= 36
    assert not {"apiVersion", "kind", "spec", "elements"} & set(board)  # not schema v2
    assert isinstance(board["panels"], list) and board["panels"]


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_panel_is_top_level_and_no_row_is_collapsed(name: str) -> None:
    """A collapsed row holds its panels inside itself: hidden, and unseen by the checks."""
    for panel in BOARDS[name]["panels"]:
        assert not panel.get("panels"), panel["title"]
        if panel["type"] == "row":
            assert panel["collapsed"] is False, panel["title"]


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_a_dashboard_has_a_datasource_variable_and_job_instance_agent(name: str) -> None:
    variables = {v["name"]: v for v in BOARDS[name]["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for key in ("job", "instance", "agent"):
        assert variables[key]["type"] == "query"
        assert variables[key]["datasource"] == DATASOURCE
        assert variables[key]["includeAll"] and variables[key]["multi"]


def walk(node: object) -> list[object]:
    found = []
    if isinstance(node, dict):
        if "datasource" in node:
            found.append(node["datasource"])
        for value in node.values():
            found += walk(value)
    elif isinstance(node, list):
        for item in node:
            found += walk(item)
    return found


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_no_datasource_is_hard_coded(name: str) -> None:
    board = {k: v for k, v in BOARDS[name].items() if k != "templating"}
    board["variables"] = [
        v for v in BOARDS[name]["templating"]["list"] if v["type"] != "datasource"
    ]
    assert {orjson.dumps(ds) for ds in walk(board)} == {orjson.dumps(DATASOURCE)}


@pytest.mark.parametrize("case", PANELS, ids=panel_id)
def test_a_panel_has_a_unit_a_description_and_queries(case: tuple[str, dict[str, Any]]) -> None:
    _, panel = case
    assert panel["description"].strip()
    assert panel["fieldConfig"]["defaults"]["unit"].strip()
    assert panel["targets"] and all(target["expr"].strip() for target in panel["targets"])


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_panels_have_unique_ids_and_do_not_overlap(name: str) -> None:
    panels = BOARDS[name]["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    taken: set[tuple[int, int]] = set()
    for panel in panels:
        spot = panel["gridPos"]
        assert spot["x"] + spot["w"] <= 24
        cells = {
            (x, y)
            for x in range(spot["x"], spot["x"] + spot["w"])
            for y in range(spot["y"], spot["y"] + spot["h"])
        }
        assert not cells & taken, panel["title"]
        taken |= cells


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q[0]}:{q[1]}")
def test_rates_use_the_rate_interval(query: tuple[str, str, str]) -> None:
    expr = query[2]
    for window in RANGE.findall(expr):
        assert window in ("$__rate_interval", "$__range"), expr
    for call in re.findall(r"\b(?:rate|irate)\([^\[]*\[([^\]]*)\]", expr):
        assert call == "$__rate_interval", expr


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q[0]}:{q[1]}")
def test_every_selector_filters_on_the_variables(query: tuple[str, str, str]) -> None:
    _, title, expr = query
    order = ["job", "instance", "agent"]
    # A variable's own query filters on the variables before it only.
    wanted = order[: order.index(title[1:])] if title.startswith("$") else order
    for metric, matchers in SELECTOR.findall(expr):
        for variable in wanted:
            if variable == "agent" and metric not in AGENT_LABELLED:
                continue
            assert f'{variable}=~"${variable}"' in matchers, (metric, expr)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q[0]}:{q[1]}")
def test_every_metric_a_dashboard_uses_exists(query: tuple[str, str, str]) -> None:
    for metric, _ in SELECTOR.findall(query[2]):
        assert metric in METRICS.metric_names(), metric


def test_every_expression_parses(tmp_path: Path) -> None:
    """promtool parses a rules file made of every dashboard expression."""
    promtool = prometheus_bin() / "promtool"
    rules = [
        {"record": f"corral:query_{index}", "expr": concrete(expr)}
        for index, (_, _, expr) in enumerate(QUERIES)
    ]
    path = tmp_path / "dashboards.rules.json"  # YAML is a superset of JSON
    path.write_bytes(orjson.dumps({"groups": [{"name": "dashboards", "rules": rules}]}))
    done = subprocess.run(
        [str(promtool), "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout


def test_the_example_prometheus_configuration_is_valid() -> None:
    promtool = prometheus_bin() / "promtool"
    done = subprocess.run(
        [str(promtool), "check", "config", str(DASHBOARDS / "prometheus.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_provisioning_examples_point_at_the_dashboards_and_prometheus() -> None:
    provider = (DASHBOARDS / "provisioning/dashboards/corral.yaml").read_text()
    datasource = (DASHBOARDS / "provisioning/datasources/prometheus.yaml").read_text()
    assert "apiVersion: 1" in provider and "type: file" in provider and "path:" in provider
    assert "apiVersion: 1" in datasource and "type: prometheus" in datasource
