"""``agentladder savings`` on a SQLite store: the table and the JSON of
``GET /routing/savings``, the empty window in one line, a bad window in one line."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.domain.routing.spec import Strategy
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService
from agentladder.store.served import ServedRequest
from agentladder.store.url import open_store
from tests.cli.test_cli_data import run

runner = CliRunner()


def stored(db: Path) -> None:
    """Two answers at audit by cheap ($0.25, $1 at dear's prices), one judged 7 by
    feedback; one by dear itself, an hour old; one direct."""

    async def main() -> None:
        store = await open_store(f"sqlite:///{db}")
        try:
            now = time.time()

            def routed(contract: str, agent: str, cost: float, at: float) -> ServedRequest:
                return ServedRequest(
                    contract_id=contract, agent_id=agent, caller="team-a", task_type="audit",
                    at=at, routed=Strategy.CHEAPEST_ABOVE, cost_usd=cost, input_tokens=9,
                    output_tokens=3, reference_agent="dear", reference_cost_usd=1.0,
                    reference_skill=8.0, reference_sd=0.2, quality_floor=6.5,
                )  # fmt: skip

            direct = ServedRequest(contract_id="gw-d", agent_id="cheap", caller="team-a",
                                   task_type="audit", at=now - 1)  # fmt: skip
            records = [routed("gw-1", "cheap", 0.25, now - 10), routed("gw-2", "cheap", 0.25, now),
                       routed("gw-3", "dear", 1.0, now - 3600), direct]  # fmt: skip
            await store.put_served(records, 30 * 86_400)
            evidence = judgment_evidence("cheap", "gw-1:feedback", "audit", 7.0, True, now,
                                         judge="feedback:team-a", deferred=True)  # fmt: skip
            await SkillService(store).observe(evidence)
        finally:
            await store.close()

    asyncio.run(main())


def test_savings_prints_the_figures_and_their_json(tmp_path: Path) -> None:
    """The table's overall and audit rows with the cost ratio 1.5 / 3 and the quality 7
    against 8 (one judged), the line of what was left out; --json is the API's answer;
    --days 0.01 (under an hour) leaves dear's answer out."""
    db = tmp_path / "savings.db"
    stored(db)
    out = json.loads(run("savings", "--db", str(db), "--json", "--seed", "3"))
    assert (out["routed"], out["direct"], out["seed"]) == (3, 1, 3)
    [audit] = out["task_types"]
    assert audit["cost"]["ratio"] == 0.5
    assert (audit["quality"]["judged"], audit["quality"]["ratio"]) == (1, 7 / 8)
    table = run("savings", "--db", str(db))
    assert "overall" in table
    assert "audit" in table
    assert "0.500" in table  # cost: 1.5 against 3
    assert "0.875" in table  # quality: 7 against 8
    assert "Quality of the judged ones" in table
    assert "1 not routed (an agent named directly)." in table
    recent = json.loads(run("savings", "--db", str(db), "--json", "--days", "0.01"))
    assert recent["routed"] == 2
    assert recent["overall"]["cost"]["ratio"] == 0.25


def test_an_empty_window_and_a_bad_one_are_one_line(tmp_path: Path) -> None:
    """A store with no gateway traffic: one line saying what is routed. --days 0: one
    line naming it, exit 1."""
    db = tmp_path / "empty.db"

    async def create() -> None:
        await (await open_store(f"sqlite:///{db}")).close()

    asyncio.run(create())
    out = run("savings", "--db", str(db))
    assert out.startswith("No routed gateway answer in the last 7 days")
    assert len(out.strip().splitlines()) == 1
    result = runner.invoke(app, ["savings", "--db", str(db), "--days", "0"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["error: --days: must be more than 0 (0.0)"]
