"""Does routing pay, as a team sees it: `agentladder serve` (SQLite, and NATS on the
session's nats-server) in front of a local provider, requests through the official
``openai`` client, feedback through ``POST /v1/feedback``, then ``GET /routing/savings``
against figures computed by hand.

cheap costs $1 and $2 per million input and output tokens, dear ten times that; dear is
judged above cheap at audit, so it is every routing's reference. With a floor of 6,
``cheapest_above`` answers with cheap; ``best`` with dear (the reference itself). Every
answer uses 11 prompt and 7 completion tokens (the provider's usage, a stream's too):
cheap's costs $0.000025, dear's $0.00025. sorter, dearer still (never explored, never
the reference: no evidence), is ``gateway.classify``'s agent: a request to ``route``
that names no task type is classified by it at $0.0005, routing's own cost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import Providers
from tests.served import Server, seed_scores, start_server

TOKEN = "team-a-token-0123456789"
ORCH = "orchestrator-token-0123456789"
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
FLOOR = {"x-agentladder-quality-floor": "6"}
CHEAP, DEAR, SORTER = 25e-6, 250e-6, 500e-6


def config(base_url: str) -> str:
    """cheap and dear behind the gateway; no fit during the test (the feedback's source
    keeps the prior's leniency, 0: the scores count as given)."""

    def agent(name: str, input_price: float, output_price: float, does: str = "good") -> str:
        return f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: {input_price}
    output_price_per_mtok: {output_price}
    backend: {{kind: openai, base_url: "{base_url}", model: "{does}:{name}",
               api_key_env: GW_KEY_SAVINGS}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {TOKEN}, name: team-a}}
    - {{role: orchestrator, token: {ORCH}}}
skill:
  fit_interval_s: 3600
gateway:
  max_attempts: 2
  classify: {{agent: sorter, task_types: [audit]}}
agents:{agent("cheap", 1.0, 2.0)}{agent("dear", 10.0, 20.0)}{agent("sorter", 20.0, 40.0, "parrot")}
"""


@pytest.fixture(params=["sqlite", "nats"])
def gateway(
    request: pytest.FixtureRequest, tmp_path: Path, providers: Providers,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Server]:  # fmt: skip
    """`agentladder serve` over SQLite or NATS, dear judged above cheap at audit."""
    monkeypatch.setenv("GW_KEY_SAVINGS", "sk-savings-secret")
    store = None if request.param == "sqlite" else request.getfixturevalue("nats_store_url")
    server = start_server(tmp_path, config(providers.base_url), store=store)
    try:
        seed_scores(server, {"dear": 9.0, "cheap": 8.0}, ORCH)
        yield server
    finally:
        server.stop()


def savings(server: Server, **params: Any) -> dict[str, Any]:
    """``GET /routing/savings``'s JSON."""
    answer = httpx.get(server.url("/routing/savings"), params=params, timeout=30)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def traffic(server: Server) -> dict[str, list[str]]:
    """Five cheapest_above requests and one streamed (cheap answers), two best ones (dear,
    the reference itself), one naming cheap directly, one classified at audit by sorter
    (cheap answers): the contracts by the agent that answered, the stream's, the direct
    one's and the classified one's left out."""
    contracts: dict[str, list[str]] = {"cheap": [], "dear": []}
    with openai.OpenAI(
        base_url=server.url("/v1"), api_key=TOKEN, max_retries=0, timeout=30
    ) as client:

        def ask(model: str, headers: dict[str, str]) -> None:
            raw = client.chat.completions.with_raw_response.create(
                model=model, messages=ASK, extra_headers=headers
            )
            contracts[raw.headers["x-agentladder-agent"]].append(
                raw.headers["x-agentladder-contract"]
            )

        for _ in range(5):
            ask("route:audit", FLOOR)
        pieces = [
            chunk.choices[0].delta.content or ""
            for chunk in client.chat.completions.create(
                model="route:audit", messages=ASK, stream=True, extra_headers=FLOOR
            )
            if chunk.choices
        ]
        assert "".join(pieces) == "answer from cheap"
        for _ in range(2):
            ask("route:audit", {})  # best: dear, the reference itself
        client.chat.completions.create(model="cheap", messages=ASK)  # direct: not routed
        classified = client.chat.completions.with_raw_response.create(
            model="route", extra_headers=FLOOR,
            messages=[{"role": "user", "content": "Which controls matter? ANSWER=audit"}],
        )  # fmt: skip
        assert classified.headers["x-agentladder-classified"] == "agent"
        assert classified.headers["x-agentladder-agent"] == "cheap"
    assert (len(contracts["cheap"]), len(contracts["dear"])) == (5, 2)
    return contracts


def settled_savings(server: Server, routed: int, direct: int) -> dict[str, Any]:
    """``GET /routing/savings`` once the records are written (once a second)."""
    deadline = time.monotonic() + 20
    found = savings(server)
    while found["routed"] < routed or found["direct"] < direct:
        assert time.monotonic() < deadline, (found, server.output()[-3000:])
        time.sleep(0.2)
        found = savings(server)
    return found


def test_cheapest_above_costs_less_than_the_reference_by_the_hand_computed_figures(
    gateway: Server,
) -> None:
    """Feedback of 7, 8 and 9 on three of cheap's answers and 9 on one of dear's. The
    savings: cost 7 x 0.000025 + 2 x 0.00025 and the classifier's 0.0005 against
    9 x 0.00025 (ratio 0.522, its interval under 1); quality (7 + 8 + 9 + 9) against
    three times dear's skill when routed plus its own answer's 9; the routing page's
    panel shows them."""
    contracts = traffic(gateway)
    given = [(contracts["cheap"][0], 7), (contracts["cheap"][1], 8),
             (contracts["cheap"][2], 9), (contracts["dear"][0], 9)]  # fmt: skip
    for contract, score in given:
        rated = httpx.post(
            gateway.url("/v1/feedback"), headers={"Authorization": f"Bearer {TOKEN}"},
            json={"contract_id": contract, "score": score}, timeout=10,
        )  # fmt: skip
        assert rated.status_code == 200, rated.text
    route = {"count": 2, "task_type": "audit", "strategy": "cheapest_above",
             "quality_floor": 6, "online_only": True}  # fmt: skip
    routed = httpx.post(gateway.url("/route"), json=route, timeout=10,
                        headers={"Authorization": f"Bearer {ORCH}"}).json()  # fmt: skip
    assert routed["reference"]["agent_id"] == "dear"
    skill = routed["reference"]["skill"]
    found = settled_savings(gateway, routed=9, direct=1)
    assert (found["read"], found["routed"], found["direct"], found["uncosted"]) == (10, 9, 1, 0)
    assert found["truncated"] is False
    [audit] = found["task_types"]
    assert audit["task_type"] == "audit"
    assert (audit["requests"], audit["by_reference"]) == (9, 2)
    assert audit["answered_by"] == [{"agent_id": "cheap", "requests": 7},
                                    {"agent_id": "dear", "requests": 2}]  # fmt: skip
    assert audit["references"] == [{"agent_id": "dear", "requests": 9}]
    assert audit["floor_low"] == audit["floor_high"] == 6
    cost = audit["cost"]
    assert cost["routed_usd"] == pytest.approx(7 * CHEAP + 2 * DEAR + SORTER)
    assert cost["classifier_usd"] == pytest.approx(SORTER)
    assert cost["reference_usd"] == pytest.approx(9 * DEAR)
    assert cost["saved_usd"] == pytest.approx(7 * (DEAR - CHEAP) - SORTER)
    assert cost["ratio"] == pytest.approx((7 * CHEAP + 2 * DEAR + SORTER) / (9 * DEAR))
    assert cost["low"] <= cost["ratio"] <= cost["high"] < 1
    quality = audit["quality"]
    assert quality["judged"] == 4
    assert quality["mean_score"] == pytest.approx(33 / 4)
    assert quality["routed"] == pytest.approx(33 / 4)  # no fit yet: the source's prior, 0
    assert quality["reference"] == pytest.approx((3 * skill + 9) / 4)
    assert quality["ratio"] == pytest.approx(33 / (3 * skill + 9))
    assert quality["low"] <= quality["ratio"] <= quality["high"]
    overall = found["overall"]
    assert (overall["requests"], overall["cost"]["ratio"]) == (9, cost["ratio"])
    assert overall["quality"]["ratio"] == quality["ratio"]
    assert savings(gateway)["task_types"] == found["task_types"]  # the same seed, the same
    page = httpx.get(gateway.url("/dashboard/routing"), timeout=30).text
    panel = page[page.index('id="savings"') :]
    assert '<tr data-task-type="audit">' in panel
    assert "0.522" in panel
