"""examples/grafana/agentladder.json: a Grafana dashboard whose every query reads metrics
that a real `agentladder serve` exposes on /metrics after a judgment, a deliberation and
gateway traffic (a fallback, a failed check, a client over its budget, a refused caller),
with panels for the gateway and the Sentinel."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.gateway.provider import Providers
from tests.served import free_port, seed_scores, start_server

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "examples" / "grafana" / "agentladder.json"
CLIENT, TIGHT, ORCH = "client-token-0123456789", "tight-token-0123456789", "orch-token-0123456789"


def config(base_url: str) -> str:
    """Simulated agents for a deliberation; agents on the local providers at
    ``base_url`` for the gateway (gw_fail answers 500, sorter classifies, the others
    answer), its judge scoring 2 (every check fails); team-a with a budget, team-b with
    one too small for any request."""

    def agent(name: str, model: str) -> str:
        return f"""
  - {{name: {name}, input_price_per_mtok: 1.0, output_price_per_mtok: 2.0,
     backend: {{kind: openai, base_url: "{base_url}", model: "{model}", api_key_env: GW_KEY}}}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT}, name: team-a, budget: {{limit_usd: 5, period: day}}}}
    - {{role: client, token: {TIGHT}, name: team-b, budget: {{limit_usd: 0.000001, period: day}}}}
    - {{role: orchestrator, token: {ORCH}}}
gateway:
  max_attempts: 2
  judge: {{name: referee, backend: {{kind: openai, base_url: "{base_url}", model: "judge:2",
          api_key_env: GW_KEY}}}}
  classify: {{agent: sorter, task_types: [audit]}}
agents:
  - {{name: sim_a, input_price_per_mtok: 2.5, output_price_per_mtok: 10.0,
     backend: {{kind: simulated, quality: 7.0}}}}
  - {{name: sim_b, input_price_per_mtok: 0.5, output_price_per_mtok: 1.5,
     backend: {{kind: simulated, quality: 9.0}}}}
  - {{name: sim_x, backend: {{kind: simulated, failure_rate: 1.0}}}}\
{agent("gw_good", "good:gw_good")}{agent("gw_fail", "fail:gw_fail")}\
{agent("gw_fresh", "good:gw_fresh")}{agent("sorter", "parrot:sorter")}
"""


NEW_PANELS = {
    "Gateway requests by agent and outcome": "agentladder_gateway_requests_total",
    "Gateway fallbacks and unanswered": "agentladder_gateway_fallbacks_total",
    "Gateway added time p50 and p95": "agentladder_gateway_added_latency_seconds_bucket",
    "Gateway checks by outcome": "agentladder_gateway_checks_total",
    "Checks failed by agent": "agentladder_gateway_checks_total",
    "Judge cost per hour": "agentladder_gateway_judge_cost_dollars_total",
    "Client spend against budget": "agentladder_gateway_client_budget_used_ratio",
    "Client spend today and this month": "agentladder_gateway_client_spend_dollars",
    "Budget refusals": "agentladder_http_requests_total",
    "Validations by reason and outcome": "agentladder_validations_total",
    "Should-validate decisions": "agentladder_sentinel_checks_total",
    "Refusals by reason": "agentladder_refusals_total",
}
"""The gateway's and the Sentinel's panels, and a metric each must query."""
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


def test_the_gateway_and_sentinel_panels_are_there() -> None:
    """Requests, fallbacks, added time, checks and their results, judge cost, spend
    against budgets, budget refusals, validations, decisions and refusals: each a panel
    querying its metric."""
    model = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    panels = {p["title"]: p for p in model["panels"] if p.get("type") != "row"}
    for title, metric in NEW_PANELS.items():
        assert title in panels, title
        names = set().union(*(metric_names(e) for e in _targets([panels[title]])))
        assert metric in names, (title, names)


@pytest.fixture
def providers(tmp_path: Path) -> Iterator[Providers]:
    """The local OpenAI-compatible providers (``tests/gateway/provider.py``), stopped by
    their pid at the end."""
    started = Providers(tmp_path, free_port())
    try:
        yield started
    finally:
        started.stop()


def _traffic(server: Any) -> None:
    """A fallback (gw_fail, best at audit, fails; gw_good answers), a request classified by
    the sorter agent, a rookie's answer checked and failed (the judge scores 2), one no
    agent answered (503), team-b refused by its budget (429), a caller without a token
    refused (401)."""
    seed_scores(server, {"gw_fail": 9.8, "gw_good": 8.0}, ORCH)
    ask = {"messages": [{"role": "user", "content": "Which controls matter? ANSWER=audit"}]}

    def chat(token: str | None, model: str) -> int:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        return httpx.post(
            server.url("/v1/chat/completions"), json={**ask, "model": model}, headers=headers,
            timeout=30,
        ).status_code  # fmt: skip

    assert chat(CLIENT, "route:audit") == 200
    assert chat(CLIENT, "route") == 200
    assert chat(CLIENT, "gw_fresh") == 200
    assert chat(CLIENT, "gw_fail") == 503
    assert chat(TIGHT, "gw_good") == 429
    assert chat(None, "gw_good") == 401


def test_every_metric_the_dashboard_queries_is_exposed(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a judgment, a deliberation on simulated agents (one always failing) and the
    gateway traffic above, every metric name in the dashboard's PromQL (every panel's) is a
    sample of the served /metrics."""
    monkeypatch.setenv("GW_KEY", "sk-local-secret")
    model = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    wanted = set().union(*(metric_names(e) for e in _targets(model["panels"])))
    assert {"agentladder_http_requests_total", "agentladder_provider_cost_dollars_total"} <= wanted
    assert set(NEW_PANELS.values()) <= wanted
    server = start_server(tmp_path, config(providers.base_url))
    orch = {"Authorization": f"Bearer {ORCH}"}
    try:
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "sim_a", "contract_id": "c-1", "score": 8.5},
            headers=orch, timeout=10,
        )  # fmt: skip
        assert judged.status_code == 200, judged.text
        body = {"user_query": "Which controls matter most?", "scope": "standard",
                "agent_names": ["sim_a", "sim_b", "sim_x"]}  # fmt: skip
        started = httpx.post(server.url("/deliberation"), json=body, headers=orch, timeout=10)
        assert started.status_code == 202, started.text
        server.settled(started.json()["deliberation_id"])
        _traffic(server)
        deadline = time.monotonic() + 60
        while True:  # the check is judged off the request path
            text = httpx.get(server.url("/metrics"), timeout=10).text
            if "agentladder_validations_total" in exposed(text) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        server.stop()
    missing = sorted(wanted - exposed(text))
    assert missing == [], f"queried but not exposed: {missing}"
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text) for s in f.samples
    }  # fmt: skip
    failed = (("agent", "gw_fresh"), ("outcome", "failed"), ("task_type", "general"))
    assert samples["agentladder_gateway_checks_total", failed] == 1
    for client, limit in (("team-a", 5.0), ("team-b", 0.000001)):
        at = (("client", client), ("period", "day"))
        spent = samples["agentladder_gateway_client_spend_dollars", at]
        used = samples["agentladder_gateway_client_budget_used_ratio", at]
        assert used == pytest.approx(spent / limit), client
        assert used > 0 or client == "team-b", client  # team-a spent; team-b was refused
