"""The import on every store: the same counts, a re-run adds nothing, the replay of the
events and of the skill log equals the stored state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.verify import verify_store
from tests.importing.helpers import run_with_services

runner = CliRunner()
LINES = 1_200  # more than one batch of 1,000


def test_an_import_applies_once_on_each_store(store_url: str, tmp_path: Path) -> None:
    """1,200 judgments over 30 agents (a contract repeated, one conflicting): imported,
    then all duplicates on a re-run; verify passes; every key once."""
    path = tmp_path / "h.jsonl"
    with path.open("w") as out:
        for i in range(LINES):
            line = {"agent_id": f"agent-{i % 30}", "contract_id": f"c-{i}",
                    "task_type": ("sql", "code")[i % 2], "score": (i * 3) % 11}  # fmt: skip
            out.write(json.dumps(line) + "\n")
        out.write(json.dumps({"agent_id": "agent-0", "contract_id": "c-0", "score": 0}) + "\n")

    async def body(services: Any) -> tuple[Any, ...]:
        first = await run_import(services.oracle, read_jsonl(path))
        again = await run_import(services.oracle, read_jsonl(path))
        report = await verify_store(services.store, services.settings.oracle)
        keys = [e.key for a in range(30) for e in await services.store.events(f"agent-{a}")]
        return first, again, report, keys

    first, again, report, keys = run_with_services(store_url, body)
    assert (first.imported, first.duplicate, first.conflicting) == (LINES, 0, 1)
    assert (again.imported, again.duplicate, again.conflicting) == (0, LINES, 1)
    assert report.ok
    assert report.events_replayed == LINES
    assert report.skill_events_replayed == LINES
    assert sorted(keys) == sorted(f"judgment:c-{i}" for i in range(LINES))


def test_the_cli_imports_into_a_store_url(nats_store_url: str, tmp_path: Path) -> None:
    """`agentladder import --store nats://...`: the summary, then `oracle verify` on it."""
    path = tmp_path / "h.jsonl"
    path.write_text(
        "".join(
            json.dumps({"agent_id": f"a{i % 3}", "contract_id": f"c{i}", "score": 7}) + "\n"
            for i in range(20)
        )
    )
    result = runner.invoke(app, ["import", str(path), "--store", nats_store_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] == 20
    verified = runner.invoke(app, ["oracle", "verify", "--store", nats_store_url, "--json"])
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["events_replayed"] == 20


def test_the_longest_ids_import_with_their_skill_evidence(store_url: str, tmp_path: Path) -> None:
    """A judgment whose agent id (64 characters) and contract id (256) are both as long as
    their fields allow is imported with its skill evidence, and so is one submitted alone
    (the evidence's key, ``judgment:<agent>:<contract>``, was refused past 300 characters:
    the import failed with a validation traceback after its batch's Oracle events were
    stored, and the single judgment failed)."""
    agent, contract = "a" * 64, "c" * 256
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({"agent_id": agent, "contract_id": contract, "score": 7}) + "\n")

    async def body(services: Any) -> tuple[Any, ...]:
        summary = await run_import(services.oracle, read_jsonl(path))
        alone = await services.oracle.submit_for_judgment(
            JudgmentRequest(agent_id="b" * 64, contract_id=contract, score=5.0, new_agent=True)
        )
        report = await verify_store(services.store, services.settings.oracle)
        evidence = [await services.store.get_skill_event(f"judgment:{a * 64}:{contract}")
                    for a in "ab"]  # fmt: skip
        return summary, alone, report, evidence

    summary, alone, report, evidence = run_with_services(store_url, body)
    assert (summary.imported, summary.refused) == (1, 0)
    assert alone.xp_awarded > 0
    assert report.ok
    assert all(event is not None for event in evidence)
