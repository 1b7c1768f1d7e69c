"""A served gateway that routes one agent per request (``max_attempts: 1``) and classifies
requests that name no task type, in front of the local providers (``provider.py``).

Agents (their ``backend.model`` is the provider's behaviour), by price (input, output per
million tokens): ``pricey`` (10, 20), ``thrifty`` (1, 2), ``cheapo`` (0.1, 0.2) answer;
``broken`` (0.01, 0.02) answers 500; ``sorter`` (50, 100) is the classifier, answering the
word after ``ANSWER=`` in the request (``parrot``). The judgments posted make

- ``writing``: pricey 9.5, thrifty 9.4, cheapo 6.5: best is pricey; the cheapest that
  clears 95% of pricey's skill is thrifty;
- ``code``: thrifty best; ``audit``: cheapo best; ``ops``: broken best.

``gateway.classify``: ``traceback`` or ``stack trace`` is code, ``control(s)`` audit, else
the sorter is asked among writing, code, audit and ops; the default is writing.
Clients: team-a and team-b, each with a budget of $5 a day. Exploration is off
(``routing.max_explore_share: 0``), so every choice is known.
"""

from __future__ import annotations

import httpx

from tests.gateway.conftest import CLIENT, ORCH
from tests.served import Server

PRICES = {"pricey": (10.0, 20.0), "thrifty": (1.0, 2.0), "cheapo": (0.1, 0.2),
          "broken": (0.01, 0.02), "sorter": (50.0, 100.0)}  # fmt: skip
BEHAVIOUR = {"pricey": "good:pricey", "thrifty": "good:thrifty", "cheapo": "good:cheapo",
             "broken": "fail:broken", "sorter": "parrot:sorter"}  # fmt: skip
KEYS = {name: f"sk-{name}-secret" for name in PRICES}
SCORES = {
    "writing": {"pricey": 9.5, "thrifty": 9.4, "cheapo": 6.5},
    "code": {"thrifty": 9.0, "pricey": 7.0, "cheapo": 5.0},
    "audit": {"cheapo": 9.0, "thrifty": 6.0, "pricey": 6.0},
    "ops": {"broken": 9.5, "pricey": 4.0, "thrifty": 4.0, "cheapo": 4.0},
}
"""Each task type's judged score of each agent (``seed``)."""
JUDGMENTS = 30
TEAM_B = "team-b-token-0123456789"
"""A second client, whose spend only the test of the classifier's charge makes."""


def config(base_url: str, classify: bool = True) -> str:
    """The served configuration, its agents on the providers at ``base_url``."""
    agents = "".join(
        f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: {PRICES[name][0]}
    output_price_per_mtok: {PRICES[name][1]}
    backend: {{kind: openai, base_url: "{base_url}", model: "{BEHAVIOUR[name]}",
               api_key_env: GW_KEY_{name.upper()}}}"""
        for name in PRICES
    )
    classifier = r"""
  classify:
    task_types: [writing, code, audit, ops]
    rules:
      - {task_type: code, keywords: [traceback, "stack trace"]}
      - {task_type: audit, pattern: "\\bcontrols?\\b"}
    agent: sorter
    default: writing"""
    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT}, name: team-a, budget: {{limit_usd: 5, period: day}}}}
    - {{role: client, token: {TEAM_B}, name: team-b, budget: {{limit_usd: 5, period: day}}}}
    - {{role: orchestrator, token: {ORCH}}}
routing:
  max_explore_share: 0.0
gateway:
  max_attempts: 1{classifier if classify else ""}
agents:{agents}
"""


def seed(server: Server) -> None:
    """``JUDGMENTS`` judgments of each agent at each task type of ``SCORES``, one batch."""
    judgments = [
        {"agent_id": agent, "contract_id": f"seed-{task_type}-{agent}-{i}",
         "task_type": task_type, "score": score}
        for task_type, scores in SCORES.items() for agent, score in scores.items()
        for i in range(JUDGMENTS)
    ]  # fmt: skip
    posted = httpx.post(
        server.url("/oracle/judgments/batch"), json={"judgments": judgments},
        headers={"Authorization": f"Bearer {ORCH}"}, timeout=30,
    )  # fmt: skip
    assert posted.status_code == 200, posted.text
