"""A store a team would have after a week, built through the real paths, for the tests
that must see the dashboard full rather than thin.

``week_server`` imports a JSONL history (``agentladder import``) into a fresh SQLite file,
then starts `agentladder serve` on it in front of the local provider process
(``tests/gateway/provider.py``), with a gateway judge there, and through the API: judgments
by named judges at task types with long names, failed validations (probation in several
streams), deliberations completed and failed, gateway traffic (direct, routed with a
quality floor, a fallback past a failing agent, checked answers, feedback, a client over
its budget), until a skill fit and the routing savings include it all. Names are as long
as the rules allow, as a team's generated ids are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.gateway.provider import Providers
from tests.served import Server, free_port, start_server

__all__ = ["ADMIN", "Week", "week_server"]

ADMIN = "admin-token-week-0123456789"
ORCH = "orchestrator-token-week-0123456789"
CLIENT = "client-token-week-0123456789"
CLIENT_NAME = "platform-team.customer-support.eu-west-1.production-2026"

# task types at the rule's 64 characters and near it
EXTRACTION = "contract_clause_extraction.multilingual_procurement_documents_v2"
REVIEW = "security_code_review.static_analysis_findings_triage.monorepo"
SUPPORT = "customer_support.refund_and_chargeback_escalations.tier_two"

# agents at the rule's 64 characters and near it
REVIEWER = "compliance-reviewer.eu-west-1.primary-2026-q4-long-context-gpt"
EXTRACTOR = "contract-clause-extractor.multilingual.procurement-team-alpha-01"
AUDITOR = "security-auditor.static-analysis.monorepo-nightly-batch-run-007"
FLAKY = "flaky-summarizer.experimental.always-failing-backend-2026-12-01"
SLOW = "slow-translator.experimental.six-second-latency-backend-2026-12"
CHEAP = "gateway-answerer.cheap-tier.local-openai-compatible-server-0001"
PREMIUM = "gateway-answerer.premium-tier.local-openai-compatible-server-02"
FAILING = "gateway-answerer.broken-tier.returns-http-500-on-every-request"
IMPORTED = (
    "imported.openai.gpt-4o-2024-08-06.benchmark-run-2026-11-28-seed1",
    "imported.anthropic.claude-3-5-sonnet-20241022.bench-run-seed1",
)
JUDGES = (
    "openai/gpt-4o-mini-2024-07-18@rubric-v3+strict:contract-extraction",
    "reviewer.senior-security-engineer@platform-team.example+triage",
)
LONG_QUERY = (
    "Rank the findings of the quarterly procurement and security audit by risk, naming"
    " for each the clause or file it concerns: "
    "https://audit.example/reports/2026-q4/procurement/eu-west-1/findings?sort=risk&page=1 "
) * 3


def config(base_url: str) -> str:
    """Simulated agents for deliberations (one that always fails, one slower than the
    deadline), three agents behind the
    gateway (one answering 500), a judge, tokens with a long client name and a budget, a
    fit every second."""

    def simulated(
        name: str, quality: float, failure_rate: float = 0.0, latency_ms: int = 20
    ) -> str:
        return f"""
  - name: {name}
    provider_id: simulated-provider.with-a-long-name.eu-west-1
    model_name: simulated-model.quality-{quality}.long-context-2026-12-01-preview
    description: A simulated agent whose declared description is a long sentence of the
      kind a team writes once and never shortens, with a URL
      https://agents.example/registry/{name}/card.json in it
    capability_tags: [{EXTRACTION}, {REVIEW}, audit, legal, code-review-long-tag-name]
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0
    backend: {{kind: simulated, quality: {quality}, latency_ms: {latency_ms},
               failure_rate: {failure_rate}}}"""

    def gateway(name: str, model: str, price: float) -> str:
        return f"""
  - name: {name}
    input_price_per_mtok: {price}
    output_price_per_mtok: {2 * price}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}",
               api_key_env: WEEK_GATEWAY_KEY}}"""

    agents = (
        simulated(REVIEWER, 7.0) + simulated(EXTRACTOR, 9.0) + simulated(AUDITOR, 6.0)
        + simulated(FLAKY, 5.0, 1.0) + simulated(SLOW, 5.0, 0.0, 6000)
        + gateway(CHEAP, f"good:{CHEAP}", 1.0) + gateway(PREMIUM, f"good:{PREMIUM}", 10.0)
        + gateway(FAILING, f"fail:{FAILING}", 0.5)
    )  # fmt: skip
    return f"""
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: client, token: {CLIENT}, name: {CLIENT_NAME},
        budget: {{limit_usd: 0.004, period: day}}}}
orchestrator:
  timeout_s: 5
  deliberation_timeout_s: 3
  scope_rounds: {{quick: 1, standard: 2, deep: 4}}
skill:
  fit_interval_s: 1
gateway:
  judge:
    backend: {{kind: openai, base_url: "{base_url}", model: "judge:8"}}
    name: local-judge.rubric-v3.strict-scoring-for-long-answers-2026
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
agents:{agents}
"""


@dataclass
class Week:
    """The served store after its week: the server and what was made in it."""

    server: Server
    deliberations: list[str]
    agents: list[str]


def _history(folder: Path) -> Path:
    """A JSONL history of the imported agents and two of the configured ones, a failure
    among them, at the three task types, scored by a named judge."""
    lines = [
        {"agent_id": agent, "contract_id": f"history-{agent}-{task}-{i}", "task_type": task,
         "score": score, "judge": JUDGES[0], "success": score >= 5.0}
        for n, agent in enumerate((*IMPORTED, REVIEWER, EXTRACTOR))
        for task in (EXTRACTION, REVIEW, SUPPORT)
        for i, score in enumerate((6.0 + n, 7.5 + n / 2, 3.0, 8.0))
    ]  # fmt: skip
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _import(history: Path, db: Path) -> None:
    command = [sys.executable, "-m", "agentladder.cli", "import", str(history), "--db", str(db)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _post(server: Server, path: str, body: dict[str, Any], token: str = ORCH) -> Any:
    answer = httpx.post(
        server.url(path), json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert answer.status_code in (200, 202), f"{path}: {answer.status_code} {answer.text}"
    return answer.json()


def _judge(server: Server) -> None:
    """Judgments by two named judges at the three task types (the failing gateway agent
    judged best, so that routing tries it first and falls back), and failed validations
    that put two agents on probation in several streams."""
    scores = {REVIEWER: 7.0, EXTRACTOR: 9.0, AUDITOR: 6.0, CHEAP: 8.0, PREMIUM: 9.0, FAILING: 9.8}
    judgments = [
        {"agent_id": agent, "contract_id": f"week-{agent}-{task}-{i}", "task_type": task,
         "score": score - (i % 3) * 0.5, "judge": JUDGES[i % 2]}
        for agent, score in scores.items()
        for task in (EXTRACTION, REVIEW, SUPPORT)
        for i in range(8)
    ]  # fmt: skip
    _post(server, "/oracle/judgments/batch", {"judgments": judgments})
    for agent in (REVIEWER, AUDITOR):
        for task in (EXTRACTION, REVIEW, SUPPORT):
            contract = f"validated-{agent}-{task}"
            body = {"agent_id": agent, "contract_id": contract, "task_type": task, "score": 4.0}
            _post(server, "/oracle/judgments", body)
            verdict = {"agent_id": agent, "contract_id": contract, "passed": False}
            _post(server, "/oracle/validations", verdict)


def _deliberations(server: Server) -> list[str]:
    """Three that complete (long questions, long task types; one agent whose calls always
    fail among them) and one that fails (its slow agent runs past the deadline), each
    waited for until it settles."""
    started = []
    for task in (EXTRACTION, REVIEW, None):
        body = {"user_query": LONG_QUERY, "agent_names": [REVIEWER, EXTRACTOR, AUDITOR, FLAKY],
                "scope": "standard", "task_type": task}  # fmt: skip
        started.append(_post(server, "/deliberation", body)["deliberation_id"])
    body = {"user_query": LONG_QUERY, "agent_names": [REVIEWER, SLOW], "scope": "quick"}
    started.append(_post(server, "/deliberation", body)["deliberation_id"])
    deadline = time.monotonic() + 60
    for found in started:
        while True:
            record = httpx.get(server.url(f"/deliberation/{found}"), timeout=10).json()
            if record["status"] in ("completed", "failed") and record["judgments"]["state"] in (
                "applied", "skipped", "abandoned",
            ):  # fmt: skip
                break
            assert time.monotonic() < deadline, f"deliberation {found} did not settle: {record}"
            time.sleep(0.1)
    statuses = {
        httpx.get(server.url(f"/deliberation/{found}"), timeout=10).json()["status"]
        for found in started
    }
    assert statuses == {"completed", "failed"}, statuses
    return [str(found) for found in started]


def _ask(server: Server, model: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(
        server.url("/v1/chat/completions"),
        json={"model": model, "messages": [{"role": "user", "content": LONG_QUERY}],
              "max_tokens": 1},
        headers={"Authorization": f"Bearer {CLIENT}", **(headers or {})}, timeout=30,
    )  # fmt: skip


def _traffic(server: Server) -> None:
    """Direct and routed answers at the task types (a quality floor: the routing savings;
    routing tries the failing agent first: fallbacks), one request naming the failing
    agent (failed), checks by the judge, feedback, and requests until the client is over
    its budget."""
    contracts = []
    for task in (EXTRACTION, SUPPORT):
        typed = {"x-agentladder-task-type": task}
        for headers in (typed, {**typed, "x-agentladder-quality-floor": "6"}):
            answer = _ask(server, f"route:{task}", headers)
            assert answer.status_code == 200, answer.text
            contracts.append(answer.headers["x-agentladder-contract"])
        assert _ask(server, CHEAP, typed).status_code == 200
    failing = _ask(server, FAILING, {"x-agentladder-task-type": REVIEW})
    assert failing.status_code >= 500, failing.text
    rated = {"contract_id": contracts[0], "score": 8}
    _post(server, "/v1/feedback", rated, token=CLIENT)
    for _ in range(20):  # until the budget refuses
        if _ask(server, PREMIUM).status_code == 429:
            break
    else:
        raise AssertionError("the client's budget never refused a request")


def _counted(savings: dict[str, Any]) -> bool:
    """Whether the routing savings hold the four routed answers and the judged one (its
    check is judged after the answer: the savings may count the answer first)."""
    overall = savings.get("overall") or {}
    judged = (overall.get("quality") or {}).get("judged", 0)
    return bool(savings["routed"] >= 4 and judged >= 1)


def _settled(server: Server) -> None:
    """Until the routing savings count the routed answers and a fit took in everything."""
    deadline = time.monotonic() + 60
    while not _counted(httpx.get(server.url("/routing/savings"), timeout=30).json()):
        assert time.monotonic() < deadline, "the routing savings did not count the answers"
        time.sleep(0.2)
    while True:
        fresh = httpx.get(server.url("/skills"), timeout=30).json()
        if fresh.get("fitted_at") and not fresh.get("pending"):
            return
        assert time.monotonic() < deadline, f"no fit took the evidence in: {fresh}"
        time.sleep(0.2)


def _agents(server: Server) -> list[str]:
    """Every agent the store knows: the registered ones and every profile (imported)."""
    registered = httpx.get(server.url("/agents"), timeout=30).json()["agents"]
    board = httpx.get(server.url("/oracle/leaderboard"), params={"limit": 1000}, timeout=30)
    names = {entry["name"] for entry in registered}
    names |= {entry["agent_id"] for entry in board.json()["entries"]}
    return sorted(names)


@contextmanager
def week_server(folder: Path) -> Iterator[Week]:
    """The served week (above); the server and the provider stopped by their pids."""
    db = folder / "week.db"
    _import(_history(folder), db)
    providers = Providers(folder, free_port())
    os.environ["WEEK_GATEWAY_KEY"] = "sk-week-gateway-secret"  # the server's copy
    try:
        server = start_server(folder, config(providers.base_url), db="week.db")
        try:
            _judge(server)
            deliberations = _deliberations(server)
            _traffic(server)
            _settled(server)
            yield Week(server, deliberations, _agents(server))
        finally:
            server.stop()
    finally:
        providers.stop()
        os.environ.pop("WEEK_GATEWAY_KEY", None)
