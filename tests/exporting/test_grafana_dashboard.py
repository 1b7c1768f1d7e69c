"""examples/grafana/agentladder.json: a Grafana dashboard whose every query reads metrics
that a real `agentladder serve` exposes on /metrics after a judgment and a deliberation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.served import start_server

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "examples" / "grafana" / "agentladder.json"
CONFIG = """
agents:
  - {name: sim_a, input_price_per_mtok: 2.5, output_price_per_mtok: 10.0,
     backend: {kind: simulated, quality: 7.0}}
  - {name: sim_b, input_price_per_mtok: 0.5, output_price_per_mtok: 1.5,
     backend: {kind: simulated, quality: 9.0}}
  - {name: sim_x, backend: {kind: simulated, failure_rate: 1.0}}
"""
PROMQL_WORDS = {
    "sum", "rate", "irate", "increase", "by", "without", "histogram_quantile", "le", "max",
    "min", "avg", "count", "topk", "bottomk", "on", "ignoring", "group_left", "clamp_min",
    "or", "and", "unless", "offset", "delta", "deriv", "abs", "vector", "scalar", "time",
}  # fmt: skip


def _targets(panels: list[dict[str, Any]]) -> list[str]:
    """Every PromQL expression of the panels (and of the panels inside rows)."""
    found: list[str] = []
    for panel in panels:
        found += [t["expr"] for t in panel.get("targets", []) if "expr" in t]
        found += _targets(panel.get("panels", []))
    return found


def metric_names(expr: str) -> set[str]:
    """The metric names an expression reads: its identifiers, less PromQL's own words,
    label names (inside braces, after by/without), range selectors and numbers."""
    bare = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    bare = re.sub(r"\b(?:by|without)\s*\([^)]*\)", "", bare)  # grouping labels
    bare = re.sub(r"\[[^\]]*\]", "", bare)  # ranges such as [$__rate_interval]
    bare = re.sub(r'"[^"]*"', "", bare)
    bare = re.sub(r"(?<![A-Za-z0-9_:])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "", bare)  # 1e-9, 3600
    words = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", bare))
    return {w for w in words if w not in PROMQL_WORDS and not w.startswith("__")}


def exposed(text: str) -> set[str]:
    """Every sample name of a Prometheus text (``_total``, ``_bucket``, ... included)."""
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def test_metric_names_are_read_from_promql() -> None:
    """The names are the metrics, not the labels, functions, ranges or numbers."""
    expr = (
        'sum by (route, status) (rate(a_total{instance=~"$i",status=~"5.."}[$__rate_interval]))'
        " / clamp_min(sum(rate(b_total[5m])), 1e-9) * 3600"
    )
    assert metric_names(expr) == {"a_total", "b_total"}


def test_the_dashboard_is_a_grafana_model_with_a_prometheus_variable() -> None:
    """The JSON model has panels, each query on the ${datasource} Prometheus variable."""
    model = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variables = {v["name"]: v for v in model["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    panels = [p for p in model["panels"] if p.get("type") != "row"]
    assert len(panels) >= 6
    for panel in panels:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]


def test_every_metric_the_dashboard_queries_is_exposed(tmp_path: Path) -> None:
    """After a judgment and a deliberation on simulated agents (one always failing), every
    metric name in the dashboard's PromQL is a sample of the served /metrics."""
    model = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    wanted = set().union(*(metric_names(e) for e in _targets(model["panels"])))
    assert {"agentladder_http_requests_total", "agentladder_provider_cost_dollars_total"} <= wanted
    server = start_server(tmp_path, CONFIG)
    try:
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 8.5},
            timeout=10,
        )
        assert judged.status_code == 200, judged.text
        server.settled(server.deliberate(["sim_a", "sim_b", "sim_x"], scope="standard"))
        text = httpx.get(server.url("/metrics"), timeout=10).text
    finally:
        server.stop()
    missing = sorted(wanted - exposed(text))
    assert missing == [], f"queried but not exposed: {missing}"
