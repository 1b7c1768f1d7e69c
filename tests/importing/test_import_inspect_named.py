"""Whose an Inspect log's samples are when no gateway record names the answer: a model
``<provider>/<agent id>`` of an agent the store or the config knows is that agent
(``--agent`` still wins), priced at the prices the store keeps for it without
``--config``; a routed run (``openai/route:...``) whose answers no record names keeps the
name's agent id, with a warning."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.domain.agents import AgentConfig
from agentladder.store.records import Registration
from agentladder.store.url import open_store
from tests.importing.logs import sample, write_log

runner = CliRunner()


def judgments(db: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each judgment stored, by key: (agent, payload)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT agent_id, key, payload FROM oracle_events WHERE key LIKE 'judgment:%'"
        ).fetchall()
    return {key: (agent, json.loads(payload)) for agent, key, payload in rows}


def register(db: Path, name: str, prices: tuple[float, float]) -> None:
    """``name`` registered in the SQLite store at ``db`` with its declared prices, as a
    server's heartbeat leaves it."""

    async def main() -> None:
        store = await open_store(f"sqlite:///{db}")
        try:
            config = AgentConfig(
                name=name, model_name=f"{name}-model", input_price_per_mtok=prices[0],
                output_price_per_mtok=prices[1],
            )  # fmt: skip
            await store.put_registration(Registration(config=config, first_seen=1.0,
                                                      last_seen=1.0))  # fmt: skip
        finally:
            await store.close()

    asyncio.run(main())


def imported(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["import", *args, "--json"])
    assert result.stdout.strip(), result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_model_named_for_a_registered_agent_is_that_agent_at_its_stored_prices(
    tmp_path: Path,
) -> None:
    """``openai/ace`` with ``ace`` registered (prices 2 and 8 per million tokens): the
    judgment is ace's, costing 1000 input and 500 output tokens at those prices, 0.006,
    with no --config and no --agent; with --agent mapping the model elsewhere, that
    agent's."""
    db = tmp_path / "x.db"
    register(db, "ace", (2.0, 8.0))
    log = write_log(tmp_path / "ace.eval", [sample(1, scores={"s": "C"}, model="openai/ace")],
                    model="openai/ace")  # fmt: skip
    status, summary = imported(str(log), "--db", str(db))
    assert (status, summary["imported"], summary["new_agents"]) == (0, 1, [])
    ((agent, payload),) = judgments(db).values()
    assert agent == "ace"
    assert payload["cost"] == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert payload["cost"] == pytest.approx(0.006)
    mapped = write_log(tmp_path / "other.eval",
                       [sample(1, scores={"s": "I"}, model="openai/ace")],
                       eval_id="evalOther", model="openai/ace")  # fmt: skip
    status, summary = imported(str(mapped), "--db", str(db), "--agent", "openai/ace=other")
    assert (status, summary["imported"], summary["new_agents"]) == (0, 1, ["other"])
    assert judgments(db)["judgment:inspect:evalOther:1:1"][0] == "other"


def test_a_model_named_for_a_configured_or_judged_agent_is_that_agent(tmp_path: Path) -> None:
    """``openai/ace`` with ace configured (its prices, 1 and 1); ``anthropic/bee`` with bee
    only judged before (a profile, no registration); ``openai/gpt-4o`` of no known agent
    keeps the whole name's id."""
    db = tmp_path / "x.db"
    config = tmp_path / "c.yaml"
    config.write_text(
        "agents:\n  - name: ace\n    input_price_per_mtok: 1\n    output_price_per_mtok: 1\n"
    )
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps({"agent_id": "bee", "contract_id": "old", "task_type": "qa",
                                   "score": 7.0}) + "\n")  # fmt: skip
    assert imported(str(history), "--db", str(db))[0] == 0
    logs = [
        write_log(tmp_path / f"{n}.eval", [sample(1, scores={"s": "C"}, model=model)],
                  eval_id=f"eval{n}", model=model)
        for n, model in enumerate(("openai/ace", "anthropic/bee", "openai/gpt-4o"))
    ]  # fmt: skip
    status, summary = imported(*map(str, logs), "--db", str(db), "--config", str(config))
    assert (status, summary["imported"], summary["new_agents"]) == (0, 3, ["openai-gpt-4o"])
    found = judgments(db)
    assert found["judgment:inspect:eval0:1:1"][0] == "ace"
    assert found["judgment:inspect:eval0:1:1"][1]["cost"] == pytest.approx(1500 / 1e6)
    assert found["judgment:inspect:eval1:1:1"][0] == "bee"
    assert found["judgment:inspect:eval2:1:1"][0] == "openai-gpt-4o"


def test_a_routed_run_whose_answers_no_record_names_keeps_its_name_with_a_warning(
    tmp_path: Path,
) -> None:
    """A log of ``openai/route:audit`` whose calls' ids the store's served records do not
    hold (a log from another gateway): imported as before, under ``openai-route-audit``,
    and the summary warns, naming the sample; the exit status stays 0."""
    db = tmp_path / "x.db"
    log = write_log(
        tmp_path / "routed.eval",
        [sample(n, scores={"s": "C"}, model="openai/route:audit",
                request_ids=(f"gw-elsewhere-{n}",)) for n in (1, 2)],
        model="openai/route:audit",
    )  # fmt: skip
    result = runner.invoke(app, ["import", str(log), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert {agent for agent, _ in judgments(db).values()} == {"openai-route-audit"}
    assert "warning: 2 samples of routed runs name no answer" in result.stderr
    assert f"{log}#1/1" in result.stderr
    status, summary = imported(str(log), "--db", str(db))
    assert (status, summary["duplicate"], summary["unfound"]) == (0, 2, 2)
    assert summary["unfound_where"] == [f"{log}#1/1", f"{log}#2/1"]
