"""Probation over HTTP: the validation rate with its reason, the sentinel check, the
privileges, /metrics and the dashboard's mark."""

from __future__ import annotations

import re
from typing import Any

import httpx

from agentladder.domain.agents import MODEL_FIELD_MAX
from agentladder.domain.run_bound import run_clearance
from agentladder.services.container import Services
from tests.api.conftest import ORCH, bearer

AGENT = "sim_a"
# the default sentinel settings' clearances (tests/domain/test_run_bound.py)
TRUSTED = run_clearance(0.05, 0.02, 1000, 0.95)
RELIABLE = run_clearance(0.2, 0.02, 1000, 0.95)


async def judge(client: httpx.AsyncClient, n: int, task_type: str = "sql") -> None:
    """Judge sim_a's task c<n>."""
    judgment = {"agent_id": AGENT, "contract_id": f"c{n}", "task_type": task_type, "score": 7.0}
    answer = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
    assert answer.status_code == 200, answer.text


async def verdict(client: httpx.AsyncClient, n: int, passed: bool) -> None:
    """Record a verdict on sim_a's task c<n>."""
    body = {"agent_id": AGENT, "contract_id": f"c{n}", "passed": passed}
    answer = await client.post("/oracle/validations", json=body, headers=bearer(ORCH))
    assert answer.status_code == 200, answer.text


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of ``/metrics``."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
        if match and ",".join(sorted(match.group(1).split(","))) == wanted:
            return float(match.group(2))
    raise AssertionError(f"no sample {name}{{{wanted}}}")


def test_probation_shows_on_every_surface(api: Any) -> None:
    """A failed validation of a trusted agent: validation-rate keeps the level's rate and
    adds effective_rate 1.0, reason probation and clearance_left; the sentinel check
    validates with reason probation; privileges show both; /metrics counts the verdict and
    the agent on probation; the dashboard marks it and says why."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await services.oracle.award_xp(AGENT, "seed", 500, "seed")
        await judge(client, 0)
        url = f"/oracle/agents/{AGENT}/validation-rate"
        calm = (await client.get(url)).json()
        assert (calm["validation_rate"], calm["effective_rate"], calm["reason"]) == (
            0.05, 0.05, "level",
        )  # fmt: skip
        await verdict(client, 0, passed=False)
        rate = (await client.get(url)).json()
        assert rate == {
            "agent_id": AGENT, "task_type": None, "level": "trusted", "validation_rate": 0.05,
            "effective_rate": 1.0, "reason": "probation", "clearance_left": TRUSTED,
            "judged": 1, "failure_share": 1.0,
        }  # fmt: skip
        typed = (await client.get(url, params={"task_type": "sql"})).json()
        assert typed["reason"] == "level"  # a rookie in sql: validated every time anyway
        check = await client.post(
            "/oracle/sentinel/check", json={"agent_id": AGENT}, headers=bearer(ORCH)
        )
        assert check.json()["validate"] is True
        assert (check.json()["reason"], check.json()["rate"], check.json()["level_rate"]) == (
            "probation", 1.0, 0.05,
        )  # fmt: skip
        assert check.json()["clearance_left"] == TRUSTED
        privileges = (await client.get(f"/oracle/agents/{AGENT}/privileges")).json()
        assert (privileges["validation_rate"], privileges["effective_rate"]) == (0.05, 1.0)
        assert privileges["rate_reason"] == "probation"
        await judge(client, 1)
        await verdict(client, 1, passed=True)
        text = (await client.get("/metrics")).text
        assert metric(text, "agentladder_validations_total", reason="level", outcome="failed") == 1
        assert (
            metric(text, "agentladder_validations_total", reason="probation", outcome="passed") == 1
        )
        assert metric(text, "agentladder_agents_on_probation", reason="probation") == 1
        assert metric(text, "agentladder_agents_on_probation", reason="model_change") == 0
        assert (
            metric(text, "agentladder_sentinel_checks_total", reason="probation", validate="true")
            == 1
        )
        page = (await client.get("/dashboard")).text
        row = re.search(rf'<tr data-agent="{AGENT}".*?</tr>', page, re.S)
        assert row is not None
        assert 'class="probation"' in row.group(0)
        assert f"overall: probation, {TRUSTED - 1} passed validations to go" in row.group(0)
        other = re.search(r'<tr data-agent="sim_b".*?</tr>', page, re.S)
        assert other is not None
        assert 'class="probation"' not in other.group(0)
        detail = (await client.get(f"/dashboard/agents/{AGENT}")).text
        assert 'id="probation-table"' in detail
        assert f"{TRUSTED - 1} of {TRUSTED}" in detail

    api(body)


def test_a_model_change_heartbeat_shows_as_its_reason(api: Any) -> None:
    """An agent outside the config heartbeats a new model: reason model_change, counted by
    the probation gauge under model_change."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "ext", "provider_id": "p", "model_name": "m1"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        await services.oracle.award_xp("ext", "seed", 100, "seed")
        beat["model_name"] = "m2"
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        rate = (await client.get("/oracle/agents/ext/validation-rate")).json()
        assert (rate["validation_rate"], rate["effective_rate"], rate["reason"]) == (
            0.2, 1.0, "model_change",
        )  # fmt: skip
        assert rate["clearance_left"] == RELIABLE
        text = (await client.get("/metrics")).text
        assert metric(text, "agentladder_agents_on_probation", reason="model_change") == 1
        page = (await client.get("/dashboard")).text
        row = re.search(r'<tr data-agent="ext".*?</tr>', page, re.S)
        assert row is not None
        assert ">model change</span>" in row.group(0)

    api(body, tokens=False)  # heartbeats from loopback


def test_a_model_change_beyond_the_field_bound_is_a_422_not_a_500(api: Any) -> None:
    """A heartbeat whose new ``provider_id`` is longer than a model field may be (found by
    the stateful fuzzer: a 500 from the model-change event) is refused whole with a 422
    naming the field; the agent keeps its model and is not put on probation."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "ext", "provider_id": "p", "model_name": ""}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        await services.oracle.award_xp("ext", "seed", 100, "seed")  # reliable: not rate 1
        long = "p" * (MODEL_FIELD_MAX + 1)
        refused = await client.post("/agents/heartbeat", json={**beat, "provider_id": long})
        assert refused.status_code == 422
        assert "provider_id" in refused.text
        agent = (await client.get("/agents/ext")).json()
        assert agent["provider_id"] == "p"
        rate = (await client.get("/oracle/agents/ext/validation-rate")).json()
        assert rate["reason"] != "model_change"
        edge = {**beat, "provider_id": "q" * MODEL_FIELD_MAX}
        assert (await client.post("/agents/heartbeat", json=edge)).status_code == 200
        rate = (await client.get("/oracle/agents/ext/validation-rate")).json()
        assert rate["reason"] == "model_change"

    api(body, tokens=False)
