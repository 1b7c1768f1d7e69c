"""``/metrics``: running totals as counters, provider calls measured, static files by route."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentladder.services.container import Services
from tests.inprocess import call_app

AGENTS: dict[str, Any] = {
    "agents": [
        {"name": "sim_a", "input_price_per_mtok": 2.5, "output_price_per_mtok": 10.0,
         "backend": {"kind": "simulated", "quality": 7.0}},
        {"name": "sim_b", "input_price_per_mtok": 0.5, "output_price_per_mtok": 1.5,
         "backend": {"kind": "simulated", "quality": 9.0}},
        {"name": "sim_x", "backend": {"kind": "simulated", "failure_rate": 1.0}},
    ]
}  # fmt: skip


def families(text: str) -> dict[str, Any]:
    """The metric families of a Prometheus text, by name."""
    return {family.name: family for family in text_string_to_metric_families(text)}


def value(family: Any, sample: str, **labels: str) -> float:
    """The value of the family's ``sample`` with exactly ``labels``."""
    found = [s.value for s in family.samples if s.name == sample and s.labels == labels]
    assert len(found) == 1, (sample, labels, family.samples)
    return float(found[0])


async def deliberate(client: httpx.AsyncClient, services: Services) -> dict[str, Any]:
    """One settled standard deliberation of the three agents (sim_x always fails)."""
    names = ["sim_a", "sim_b", "sim_x"]
    started = await client.post("/deliberation", json={"user_query": "q", "agent_names": names})
    assert started.status_code == 202
    await services.orchestrator.settle()
    body: dict[str, Any] = (
        await client.get(f"/deliberation/{started.json()['deliberation_id']}")
    ).json()
    return body


def test_running_totals_are_counters() -> None:
    """Deliberations finished, awards and refusals are counters named ``_total``."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await deliberate(client, services)
        await client.post("/agents/heartbeat", json={"name": "sim_a", "xp": 5})  # refused
        text = (await client.get("/metrics")).text
        found = families(text)
        for name in ("agentladder_deliberations", "agentladder_awards", "agentladder_refusals"):
            assert found[name].type == "counter", name
            assert f"# TYPE {name}_total counter" in text
        assert value(found["agentladder_deliberations"], "agentladder_deliberations_total",
                     status="completed") == 1  # fmt: skip
        assert value(found["agentladder_awards"], "agentladder_awards_total", kind="judgment") == 3
        assert value(found["agentladder_refusals"], "agentladder_refusals_total",
                     reason="self_promotion") == 1  # fmt: skip

    call_app(AGENTS, body)


def test_provider_calls_are_measured_per_agent() -> None:
    """Each call's latency in a histogram by agent and call; failures by kind; the tokens
    and the cost of the calls that answered, per agent, equal to the record's."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        record = await deliberate(client, services)
        found = families((await client.get("/metrics")).text)
        latency = found["agentladder_provider_call_duration_seconds"]
        assert latency.type == "histogram"
        seconds = "agentladder_provider_call_duration_seconds_count"
        rounds = len(record["rounds"])
        assert rounds == 2
        # sim_a proposes once a round and evaluates sim_b's proposal (sim_x has none)
        assert value(latency, seconds, agent="sim_a", call="propose") == rounds
        assert value(latency, seconds, agent="sim_a", call="evaluate") == rounds
        tries = sum(p["attempts"] for r in record["rounds"] for p in r["proposals"]
                    if p["agent_id"] == "sim_x")  # fmt: skip
        assert tries > rounds  # retried
        assert value(latency, seconds, agent="sim_x", call="propose") == tries
        errors = found["agentladder_provider_call_errors"]
        assert errors.type == "counter"
        total = "agentladder_provider_call_errors_total"
        assert value(errors, total, agent="sim_x", call="propose", kind="refused") == tries
        assert not [s for s in errors.samples if s.labels.get("agent") == "sim_a"]
        cost = found["agentladder_provider_cost_dollars"]
        tokens = found["agentladder_provider_tokens"]
        for agent in ("sim_a", "sim_b"):
            spent = value(cost, "agentladder_provider_cost_dollars_total", agent=agent)
            assert spent == pytest.approx(record["agent_costs"][agent])
            assert spent > 0
            for direction in ("input", "output"):
                assert value(tokens, "agentladder_provider_tokens_total", agent=agent,
                             direction=direction) > 0  # fmt: skip

    call_app(AGENTS, body)


def test_writes_are_visible() -> None:
    """Compare-and-set attempts and conflicts by operation, side effects retried, and the
    side effects in flight with the oldest one's age: counters and gauges that exist before
    any trouble (an operator's alert needs the series) and count what the services did."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        before = families((await client.get("/metrics")).text)
        assert before["agentladder_side_effects_pending"].type == "gauge"
        assert before["agentladder_side_effects_oldest_seconds"].type == "gauge"
        for name in ("attempts", "conflicts", "exhausted"):
            assert before[f"agentladder_store_cas_{name}"].type == "counter"
        assert before["agentladder_side_effect_retries"].type == "counter"
        await deliberate(client, services)
        services.orchestrator.writes.retried["judgments"] += 2  # as two failed attempts would
        found = families((await client.get("/metrics")).text)
        attempts = found["agentladder_store_cas_attempts"]
        assert value(attempts, "agentladder_store_cas_attempts_total", op="stats") == 1
        assert value(found["agentladder_side_effect_retries"],
                     "agentladder_side_effect_retries_total", kind="judgments") == 2  # fmt: skip
        assert value(found["agentladder_side_effects_pending"],
                     "agentladder_side_effects_pending") == 0  # fmt: skip
        assert value(found["agentladder_side_effects_oldest_seconds"],
                     "agentladder_side_effects_oldest_seconds") == 0  # fmt: skip

    call_app(AGENTS, body)


def test_static_files_are_labelled_by_their_route() -> None:
    """Two static files and a docs asset count under their mounts' routes, not their paths."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        for path in ("/static/dashboard.css", "/static/picker.js", "/docs-assets/favicon.png"):
            assert (await client.get(path)).status_code == 200
        found = families((await client.get("/metrics")).text)
        requests = found["agentladder_http_requests"]
        routes = {s.labels["route"] for s in requests.samples if s.name.endswith("_total")}
        assert "/static/{path}" in routes
        assert "/docs-assets/{path}" in routes
        assert not [r for r in routes if r.endswith((".css", ".js", ".png"))]
        assert "unmatched" not in routes
        total = "agentladder_http_requests_total"
        assert value(requests, total, method="GET", route="/static/{path}", status="200") == 2

    call_app(AGENTS, body)


def test_the_skill_queue_metrics_are_zero_without_a_queue() -> None:
    """Memory keeps no skill queue (its step is on the request path): the lag, depth,
    applied, refusals and shards held are served, all 0, typed as documented."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        assert services.skill.queue is None
        assert services.applier is None
        found = families((await client.get("/metrics")).text)
        for name, kind, sample in (
            ("agentladder_skill_lag_seconds", "gauge", "agentladder_skill_lag_seconds"),
            ("agentladder_skill_queue_depth", "gauge", "agentladder_skill_queue_depth"),
            ("agentladder_skill_applied", "counter", "agentladder_skill_applied_total"),
            (
                "agentladder_skill_queue_refusals",
                "counter",
                "agentladder_skill_queue_refusals_total",
            ),
            ("agentladder_skill_shards_held", "gauge", "agentladder_skill_shards_held"),
        ):
            assert found[name].type == kind, name
            assert value(found[name], sample) == 0

    call_app(AGENTS, body)
