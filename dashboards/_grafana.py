"""Building blocks for corral's Grafana dashboards (classic JSON model).

`Board` lays panels out on Grafana's 24-column grid and gives each one the
`${datasource}` variable, a unit, a description and code-mode targets;
`rate` and `quantile` build the PromQL every panel uses, always over
`$__rate_interval`; `variables()` is the shared templating: a Prometheus
datasource variable, then `job`, `instance` and `agent` (multi-select, All
by default).
"""

from __future__ import annotations

from typing import Any

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
S = 'job=~"$job", instance=~"$instance"'  # every corral metric
SA = S + ', agent=~"$agent"'  # metrics with an agent label
RI = "[$__rate_interval]"
WIDTH = 24

Panel = dict[str, Any]


def rate(metric: str, selector: str = SA, by: str = "") -> str:
    grouping = f"sum by ({by}) " if by else "sum"
    return f"{grouping}(rate({metric}{{{selector}}}{RI}))"


def quantile(q: float, metric: str, selector: str = SA, by: str = "") -> str:
    keys = f"le, {by}" if by else "le"
    return f"histogram_quantile({q}, sum by ({keys}) (rate({metric}_bucket{{{selector}}}{RI})))"


def target(expr: str, legend: str = "", instant: bool = False) -> dict[str, Any]:
    return {"expr": expr, "legendFormat": legend or "__auto", "instant": instant}


class Board:
    """Lays panels out left to right, top to bottom, on Grafana's 24-column grid."""

    def __init__(self, uid: str, title: str, description: str) -> None:
        self.uid = uid
        self.title = title
        self.description = description
        self.panels: list[Panel] = []
        self._x = 0
        self._y = 0
        self._row_height = 0

    def _place(self, w: int, h: int) -> dict[str, int]:
        if self._x + w > WIDTH:
            self._x, self._y = 0, self._y + self._row_height
            self._row_height = 0
        spot = {"h": h, "w": w, "x": self._x, "y": self._y}
        self._x += w
        self._row_height = max(self._row_height, h)
        return spot

    def row(self, title: str) -> None:
        if self._x:
            self._x, self._y = 0, self._y + self._row_height
        self.panels.append(
            {
                "type": "row",
                "title": title,
                "collapsed": False,
                "id": len(self.panels) + 1,
                "gridPos": {"h": 1, "w": WIDTH, "x": 0, "y": self._y},
                "panels": [],
            }
        )
        self._y += 1
        self._row_height = 0

    def _panel(
        self, kind: str, title: str, description: str, unit: str, targets: list[Any], w: int, h: int
    ) -> Panel:
        panel: Panel = {
            "type": kind,
            "title": title,
            "description": description,
            "id": len(self.panels) + 1,
            "datasource": DATASOURCE,
            "gridPos": self._place(w, h),
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [
                {
                    "datasource": DATASOURCE,
                    "refId": chr(ord("A") + index),
                    "editorMode": "code",
                    "expr": t["expr"],
                    "legendFormat": t["legendFormat"],
                    "range": not t["instant"],
                    "instant": t["instant"],
                    **({"format": "table"} if kind == "table" else {}),
                }
                for index, t in enumerate(targets)
            ],
        }
        self.panels.append(panel)
        return panel

    def series(
        self,
        title: str,
        description: str,
        unit: str,
        *targets: dict[str, Any],
        w: int = 12,
        h: int = 8,
        stack: bool = False,
    ) -> None:
        panel = self._panel("timeseries", title, description, unit, list(targets), w, h)
        panel["fieldConfig"]["defaults"]["custom"] = {
            "drawStyle": "line",
            "lineWidth": 1,
            "fillOpacity": 20 if stack else 10,
            "showPoints": "never",
            "spanNulls": False,
            "stacking": {"mode": "normal" if stack else "none", "group": "A"},
        }
        panel["options"] = {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        }

    def stat(
        self,
        title: str,
        description: str,
        unit: str,
        expr: str,
        *,
        w: int = 6,
        h: int = 4,
        warn: float | None = None,
    ) -> None:
        panel = self._panel("stat", title, description, unit, [target(expr)], w, h)
        steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
        if warn is not None:
            steps.append({"color": "orange", "value": warn})
        panel["fieldConfig"]["defaults"]["thresholds"] = {"mode": "absolute", "steps": steps}
        panel["options"] = {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "value",
            "graphMode": "area",
            "justifyMode": "auto",
            "orientation": "auto",
            "textMode": "auto",
        }

    def bars(
        self,
        title: str,
        description: str,
        unit: str,
        expr: str,
        legend: str,
        *,
        w: int = 12,
        h: int = 8,
    ) -> None:
        panel = self._panel(
            "bargauge", title, description, unit, [target(expr, legend, True)], w, h
        )
        panel["options"] = {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "orientation": "horizontal",
            "displayMode": "basic",
            "showUnfilled": True,
        }

    def to_json(self, tags: list[str]) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "title": self.title,
            "description": self.description,
            "tags": ["corral", *tags],
            "timezone": "browser",
            "editable": True,
            "graphTooltip": 1,
            "schemaVersion": 39,
            "version": 1,
            "refresh": "30s",
            "time": {"from": "now-1h", "to": "now"},
            "links": [
                {
                    "type": "dashboards",
                    "title": "corral",
                    "tags": ["corral"],
                    "asDropdown": True,
                    "includeVars": True,
                    "keepTime": True,
                }
            ],
            "templating": {"list": variables()},
            "annotations": {"list": []},
            "panels": self.panels,
        }


def _query_variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "type": "query",
        "name": name,
        "label": label,
        "datasource": DATASOURCE,
        "definition": query,
        "query": {"query": query, "refId": f"{name}-values"},
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
        "options": [],
        "regex": "",
    }


def variables() -> list[dict[str, Any]]:
    return [
        {
            "type": "datasource",
            "name": "datasource",
            "label": "Data source",
            "query": "prometheus",
            "current": {},
            "hide": 0,
            "includeAll": False,
            "multi": False,
            "options": [],
            "refresh": 1,
            "regex": "",
        },
        _query_variable("job", "Job", "label_values(corral_build_info, job)"),
        _query_variable(
            "instance", "Instance", 'label_values(corral_build_info{job=~"$job"}, instance)'
        ),
        _query_variable(
            "agent", "Agent", f"label_values(corral_sessions_started_total{{{S}}}, agent)"
        ),
    ]
