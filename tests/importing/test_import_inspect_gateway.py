"""A real Inspect eval through the gateway, then imported into the gateway's own store:
each sample is a judgment of the agent that answered it, under that answer's contract,
counted once with the gateway's own check of it, and priced at the store's prices.

`agentladder serve` on SQLite in front of the local providers (``tests/gateway/provider.py``):
``beta`` (fails, the best at ``audit`` by the judgments seeded), ``alpha`` (answers), ``zeta``
(answers, dearer), and a judge that scores 8; every agent stays a rookie (the level
thresholds are out of reach), so every answer at ``audit`` is checked. Inspect's own
``openai`` provider runs ``gateway_eval.py`` once as ``openai/route:audit`` (beta fails,
alpha answers: the import must not say ``openai-route-audit`` nor beta) and once as
``openai/zeta`` (no task type: not checked, ``default_task_type`` null, so the import
judges those answers).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log
from typer.testing import CliRunner

from agentladder.cli import app
from tests.gateway.provider import Providers
from tests.served import free_port, seed_scores, start_server

ROOT = Path(__file__).resolve().parents[2]
CLIENT = "client-token-0123456789"
ORCH = "orchestrator-token-0123456789"
ZETA_PRICES = (3.0, 4.0)


def config(base_url: str) -> str:
    """Three agents behind the gateway and a judge, at the local providers."""

    def agent(name: str, model: str, prices: tuple[float, float] = (1.0, 2.0)) -> str:
        return f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: {prices[0]}
    output_price_per_mtok: {prices[1]}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}", api_key_env: GW_KEY}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT}, name: team-a}}
    - {{role: orchestrator, token: {ORCH}}}
oracle:
  levels: {{reliable: 1000000, trusted: 2000000, expert: 3000000}}
  specialization_levels: {{reliable: 1000000, trusted: 2000000, expert: 3000000}}
gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:8"}}
    name: local-judge
    default_task_type: null
agents:{agent("beta", "fail:beta")}{agent("alpha", "good:alpha")}\
{agent("zeta", "good:zeta", ZETA_PRICES)}
"""


def events(db: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """Every judgment stored: (agent, key, payload)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT agent_id, key, payload FROM oracle_events WHERE key LIKE 'judgment:%'"
        ).fetchall()
    return [(agent, key, json.loads(payload)) for agent, key, payload in rows]


def answers(log: EvalLog) -> dict[str, list[str]]:
    """Each sample's contract ids, one per model call, as the log recorded them from the
    gateway's ``x-request-id``."""
    assert log.samples is not None
    found: dict[str, list[str]] = {}
    for sample in log.samples:
        calls = [e for e in sample.events if e.event == "model"]
        found[str(sample.id)] = [
            next(r.id for r in (e.request_ids or []) if r.header == "x-request-id") for e in calls
        ]
    return found


def run_through_gateway(tmp_path: Path) -> tuple[EvalLog, EvalLog]:
    """The served gateway, its judgments seeded; the eval run as ``openai/route:audit``
    and as ``openai/zeta``; the gateway stopped (its records written, its checks done)."""
    providers = Providers(tmp_path, free_port())
    try:
        server = start_server(tmp_path, config(providers.base_url))
        try:
            seed_scores(server, {"beta": 9.8, "alpha": 8.2, "zeta": 5.0}, ORCH)
            ran = subprocess.run(
                [sys.executable, "-m", "tests.importing.gateway_eval", str(tmp_path / "logs"),
                 server.url("/v1"), "openai/route:audit", "openai/zeta"],
                cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]),
                     "OPENAI_API_KEY": CLIENT},
            )  # fmt: skip
        finally:
            server.stop()
    finally:
        providers.stop()
    assert ran.returncode == 0, ran.stderr[-3000:]
    routed, named = (read_eval_log(line) for line in ran.stdout.strip().splitlines()[-2:])
    return routed, named


def check_zeta(named: EvalLog, added: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Each sample of the run naming zeta: one judgment of zeta under its last answer's
    contract, its score the scorer's, its cost its tokens at zeta's prices."""
    calls = answers(named)
    assert named.samples is not None
    for sample in named.samples:
        key = f"judgment:{calls[str(sample.id)][-1]}"
        (payload,) = [p for agent, k, p in added if k == key and agent == "zeta"]
        value = sample.scores["includes"].value if sample.scores else None
        assert payload["score"] == {"C": 10.0, "I": 0.0}[str(value)]
        used = list(sample.model_usage.values())
        inputs = sum(u.input_tokens for u in used)
        outputs = sum(u.output_tokens for u in used)
        assert inputs > 0
        assert payload["cost"] == pytest.approx(
            (inputs * ZETA_PRICES[0] + outputs * ZETA_PRICES[1]) / 1e6
        )
    s4 = next(p for _, k, p in added if k == f"judgment:{calls['s4'][-1]}")
    assert s4["cost"] == pytest.approx((2 * 11 * 3.0 + 2 * 7 * 4.0) / 1e6)  # two calls


def test_a_routed_inspect_run_imports_as_the_agents_that_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The routed run's four samples are judgments of alpha under the contracts of their
    last calls (the fourth's first call, zeta's, is not what was scored), which the
    gateway's check judged already: the import adds no judgment and
    counts them as duplicates (one judgment per answer); the run naming zeta imports as
    four judgments of zeta (no --agent), under its answers' contracts, each costing its
    tokens at zeta's prices as the store keeps them (no --config); a second import adds
    nothing; the served records kept each call's x-irid."""
    monkeypatch.setenv("GW_KEY", "sk-local-secret")
    routed, named = run_through_gateway(tmp_path)
    db = tmp_path / "served.db"
    before = events(db)
    routed_calls = answers(routed)
    checked = {key for agent, key, _ in before if agent == "alpha"}
    last = {f"judgment:{contracts[-1]}" for contracts in routed_calls.values()}
    assert last <= checked, (last, sorted(checked))

    args = ["import", routed.location, named.location, "--db", str(db), "--json"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert (summary["imported"], summary["duplicate"]) == (4, 4), summary
    assert (summary["through_gateway"], summary["gateway_judged"]) == (8, 4), summary
    assert (summary["unfound"], summary["new_agents"]) == (0, []), summary
    after = events(db)
    added = [event for event in after if event not in before]
    assert {agent for agent, _, _ in added} == {"zeta"}
    assert all(not agent.startswith("openai") for agent, _, _ in after)
    check_zeta(named, added)
    assert sum(1 for _, key, _ in after if key in last) == 4  # one judgment each
    assert all(key != f"judgment:{routed_calls['s4'][0]}" for _, key, _ in after)  # zeta's

    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    second = json.loads(again.stdout)
    assert (second["imported"], second["duplicate"]) == (0, 8), second
    assert events(db) == after

    with sqlite3.connect(db) as conn:
        kept = dict(conn.execute("SELECT contract_id, request_id FROM gateway_served").fetchall())
    assert routed.samples is not None
    for sample in routed.samples:
        calls = [e for e in sample.events if e.event == "model"]
        for event, contract in zip(calls, routed_calls[str(sample.id)], strict=True):
            assert event.call is not None
            headers = event.call.request["extra_headers"]
            assert isinstance(headers, dict)
            assert kept[contract] == headers["x-irid"]
