"""Faults land on whoever failed, against a real `agentladder serve` and a real local
OpenAI-compatible server (``broken_server.py``) with a team of five agents: one whose API
key variable is not set, one answering malformed JSON, one slow but correct, one always
answering 429 with ``Retry-After: 30``, and a healthy one.

Checked through HTTP, the dashboard and the command line: who failed is who is blamed (an
author whose evaluators all failed is unscored, not judged, not on probation; the
evaluator that failed is), each agent's health (ok, down from the start for the missing
key, down after its failures, down for as long as a Retry-After asks) apart from its
heartbeat, routing around the down agents, Retry-After honoured inside a round (one
request, no retries), the explanation of a deliberation that promoted nobody, and the
preflight (`config check --probe`) naming each agent's problem.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.broken_server import BrokenServer
from tests.served import Server, start_server

MISSING_KEY = "AGENTLADDER_BLAME_MISSING_KEY"
MODELS = {
    "nokey": "good:8",  # its key variable is not set: never called
    "malformed": "malformed",
    "slow": "slow:300",  # correct, 0.3 s per answer (the timeout is 5 s)
    "limited": "ratelimit:30",
    "healthy": "good:8",
}


def config(server: BrokenServer) -> str:
    """The five agents on the broken server; a successful judgment needs a score of 5."""
    agents = "".join(
        f"""
  - name: {name}
    provider_id: local
    model_name: {model}
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend:
      kind: openai
      base_url: {server.url}
      max_tokens: 32
{f"      api_key_env: {MISSING_KEY}" if name == "nokey" else ""}"""
        for name, model in MODELS.items()
    )
    return f"""
orchestrator:
  timeout_s: 5
  success_min_score: 5
agents:{agents}
"""


@pytest.fixture(scope="module")
def broken() -> Iterator[BrokenServer]:
    """The local OpenAI-compatible server, stopped by its pid after the module."""
    with BrokenServer() as server:
        yield server


@pytest.fixture(scope="module")
def served(broken: BrokenServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`agentladder serve` with the five agents, the key variable unset."""
    os.environ.pop(MISSING_KEY, None)
    folder = tmp_path_factory.mktemp("blame")
    server = start_server(folder, config(broken), db="blame.db")
    try:
        yield server
    finally:
        server.stop()


def get(server: Server, path: str) -> Any:
    """GET ``path``: 200 and its JSON."""
    response = httpx.get(server.url(path), timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def deliberated(server: Server, agents: list[str], **extra: Any) -> dict[str, Any]:
    """A deliberation among ``agents`` (or as ``extra`` says), once settled."""
    body = {"user_query": "Which clause is the risky one?", "scope": "quick", **extra}
    if agents:
        body["agent_names"] = agents
    started = httpx.post(server.url("/deliberation"), json=body, timeout=10)
    assert started.status_code == 202, started.text
    return server.settled(started.json()["deliberation_id"])


def test_a_missing_key_is_logged_at_start_and_the_agent_is_down_not_offline(
    served: Server,
) -> None:
    """serve says, in one line, that nokey's key variable is missing; GET /agents shows it
    online (its heartbeat) and down (its health) with the reason since the start; the
    others ok with no call yet."""
    output = served.output()
    assert (
        f"agent nokey is down from the start: its API key variable {MISSING_KEY} is not set"
    ) in output
    agents = {a["name"]: a for a in get(served, "/agents")["agents"]}
    nokey = agents["nokey"]
    assert nokey["status"] == "online"
    assert nokey["health"]["status"] == "down"
    assert nokey["health"]["reason"] == f"its API key variable {MISSING_KEY} is not set"
    assert nokey["health"]["since"] is not None
    assert nokey["health"]["until"] is None
    assert agents["healthy"]["health"]["status"] == "ok"


def test_an_unscored_author_is_not_blamed_and_the_failing_evaluator_is(
    served: Server,
) -> None:
    """slow and malformed alone: slow's proposal is delivered but its only evaluator
    (malformed) fails: unscored, not judged, no probation; malformed's calls fail: judged
    failed, on probation, down. Nobody promoted, and the record and the page say why."""
    record = deliberated(served, ["slow", "malformed"], task_type="contracts")
    outcomes = record["outcomes"]
    assert outcomes["slow"]["verdict"] == "unscored"
    assert outcomes["slow"]["judgment"] == "none"
    assert "every evaluator failed (malformed)" in outcomes["slow"]["detail"]
    assert outcomes["malformed"]["verdict"] == "failed"
    assert outcomes["malformed"]["judgment"] == "failed"
    assert outcomes["malformed"]["evaluations_failed"] == 1
    assert record["ranking"]["promoted"] == []
    assert record["ranking"]["floor_group"] == ["malformed", "slow"]
    explanation = record["ranking"]["explanation"]
    assert explanation.startswith("nobody promoted: nobody in the floor group (rank 0:")
    assert "slow: unscored" in explanation
    slow = get(served, "/oracle/profiles/slow")
    assert slow["stats"]["total_tasks"] == 0  # not judged: no failure on its record
    rate = get(served, "/oracle/agents/slow/validation-rate?task_type=contracts")
    assert (rate["reason"], rate["clearance_left"]) == ("level", None)
    bad = get(served, "/oracle/profiles/malformed")
    assert (bad["stats"]["total_tasks"], bad["stats"]["successful_tasks"]) == (1, 0)
    assert bad["probation"]["contracts"]["cause"] == "failed_judgment"  # (a rookie's rate is 1)
    assert "probation" not in slow
    assert get(served, "/agents/malformed")["health"]["status"] == "down"
    page = httpx.get(served.url(f"/dashboard/deliberations/{record['id']}"), timeout=10).text
    assert 'id="promotion-explanation">nobody promoted' in page
    assert '<tr data-agent="slow" data-verdict="unscored">' in page
    agent_page = httpx.get(served.url("/dashboard/agents/malformed"), timeout=10).text
    assert re.search(r'id="evaluation-failures">1 of 1 \(100\.0%\)', agent_page)


def test_retry_after_is_honoured_inside_a_round(served: Server, broken: BrokenServer) -> None:
    """healthy and limited: limited's provider answers 429 with Retry-After 30 once and
    is asked nothing more (no retries, its evaluation not asked) though rookies retry 3
    times; it is down 30 s for it; healthy, whose only evaluator failed, is unscored."""
    before = broken.stats()["requests"].get("ratelimit", 0)
    record = deliberated(served, ["healthy", "limited"])
    assert broken.stats()["requests"].get("ratelimit", 0) - before == 1
    mine = next(p for p in record["rounds"][0]["proposals"] if p["agent_id"] == "limited")
    assert mine["attempts"] == 1
    assert "429" in mine["error"]
    assert "not retried: its provider asked not to be called for" in mine["error"]
    skipped = [
        e for p in record["rounds"][0]["proposals"] for e in p["evaluations"]
        if e["evaluator"] == "limited"
    ]  # fmt: skip
    assert [e["error"].startswith("not asked: ") for e in skipped] == [True]
    assert record["outcomes"]["healthy"]["verdict"] == "unscored"
    health = get(served, "/agents/limited")["health"]
    assert health["status"] == "down"
    assert "the provider asked to retry after 30 s" in health["reason"]
    assert health["until"] == pytest.approx(health["since"] + 30.0, abs=0.01)


def test_routing_goes_around_the_down_agents(served: Server) -> None:
    """With nokey, malformed and limited down, POST /route and a routed deliberation pick
    healthy and slow; every down agent is excluded with reason down and why; the routed
    deliberation scores both, judged successes."""
    for agent in ("malformed", "limited"):
        if get(served, f"/agents/{agent}")["health"]["status"] != "down":
            deliberated(served, ["slow", agent])  # what the earlier tests left, if alone
    routed = httpx.post(served.url("/route"), json={"count": 2}, timeout=10)
    assert routed.status_code == 200, routed.text
    answer = routed.json()
    assert sorted(p["agent_id"] for p in answer["agents"]) == ["healthy", "slow"]
    reasons = {e["agent_id"]: (e["reason"], e["detail"]) for e in answer["excluded"]}
    assert {a for a, (why, _) in reasons.items() if why == "down"} == {
        "nokey", "malformed", "limited",
    }  # fmt: skip
    assert reasons["nokey"][1] == f"down: its API key variable {MISSING_KEY} is not set"
    record = deliberated(served, [], select={"count": 2})
    assert sorted(record["agents"]) == ["healthy", "slow"]
    for agent in ("healthy", "slow"):
        assert record["outcomes"][agent]["judgment"] == "success"
    down = httpx.post(served.url("/route"), json={"count": 4}, timeout=10)
    assert down.status_code == 400
    error = down.json()["error"]
    assert error["code"] == "too_few_agents"
    assert len(error["excluded"]) == 3  # every agent left out, with its reason


def test_the_dashboard_shows_health_apart_from_the_heartbeat(served: Server) -> None:
    """The agents table: limited online and down (the reason in its title), no average
    score and no latency (none of its calls answered); its page splits failed calls from
    the latency chart."""
    if (
        get(served, "/agents/limited")["stats"]["tasks_completed"] == 0
        and not get(served, "/agents/limited")["stats"]["tasks_failed"]
    ):
        deliberated(served, ["healthy", "limited"])
    page = httpx.get(served.url("/dashboard"), timeout=10).text
    row = page[page.index('<tr data-agent="limited"') :]
    row = row[: row.index("</tr>")]
    assert '<span class="status online"' in row
    assert '<span class="health down" title="its provider calls: ' in row
    assert re.search(r'data-col="avg_score" data-value=""[^>]*>—<', row)
    assert re.search(r'data-col="p50" data-value=""[^>]*>—<', row)
    agent_page = httpx.get(served.url("/dashboard/agents/limited"), timeout=10).text
    found = re.search(r'id="latency-data">(.*?)</script>', agent_page)
    assert found is not None
    calls, answered, failed = json.loads(found.group(1))
    assert calls
    assert all(ms is None for ms in answered)
    assert all(ms is not None for ms in failed)


def test_a_judgment_with_a_typo_is_refused_with_the_suggestion(served: Server) -> None:
    """POST /oracle/judgments for "helthy": 422 naming agent_id, suggesting healthy;
    nothing listed; with new_agent it is a new agent."""
    typo = {"agent_id": "helthy", "contract_id": "t-1", "score": 8}
    refused = httpx.post(served.url("/oracle/judgments"), json=typo, timeout=10)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (error["field"], error["suggestions"]) == ("agent_id", ["healthy"])
    assert httpx.get(served.url("/oracle/profiles/helthy"), timeout=10).status_code == 404
    meant = httpx.post(
        served.url("/oracle/judgments"), json={**typo, "new_agent": True}, timeout=10
    )
    assert meant.status_code == 200, meant.text


def test_the_preflight_names_each_agents_problem(broken: BrokenServer, tmp_path: Path) -> None:
    """`config check` warns of the missing key (exit 0); `config check --probe` calls each
    endpoint once: nokey's key missing, malformed unparseable, limited's 429 and its
    Retry-After, slow and healthy ok; exit 1."""
    path = tmp_path / "agents.yaml"
    path.write_text(config(broken), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != MISSING_KEY}
    command = [sys.executable, "-m", "agentladder.cli", "config", "check"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args, str(path)], capture_output=True, text=True, timeout=60, env=env,
            check=False,
        )  # fmt: skip

    plain = run()
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert f"warning: its API key variable {MISSING_KEY} is not set" in plain.stdout
    before = broken.stats()["requests"]
    started = time.monotonic()
    probed = run("--probe")
    assert probed.returncode == 1, probed.stdout + probed.stderr
    lines = {line.split(":")[0].strip(): line for line in probed.stdout.splitlines()[-6:-1]}
    assert lines["nokey"] == f"  nokey: FAILED: its API key variable {MISSING_KEY} is not set"
    assert lines["malformed"].startswith("  malformed: FAILED: unparseable: not JSON")
    assert "answered 429" in lines["limited"]
    assert lines["limited"].endswith("it asks to retry after 30 s")
    assert lines["slow"].startswith("  slow: ok: ")
    assert lines["healthy"].startswith("  healthy: ok: ")
    assert probed.stdout.splitlines()[-1] == (
        "3 of 5 agents failed the probe: nokey, malformed, limited"
    )
    after = broken.stats()["requests"]
    for behaviour in ("good", "malformed", "slow", "ratelimit"):  # one request each
        assert after.get(behaviour, 0) - before.get(behaviour, 0) == 1, behaviour
    assert time.monotonic() - started < 60
