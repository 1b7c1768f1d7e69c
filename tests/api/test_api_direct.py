"""``POST /oracle/judgments`` answered directly (``api/direct.py``): the same answers as the
declared route's, for every request, valid or not; the valid ones of a judge do not go
through FastAPI's handler."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from fastapi import Request, Response

from agentladder.api.routes.oracle import JudgmentRoute
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services
from tests.api.conftest import AGENT_A, CONFIG, ORCH, TOKENS, bearer
from tests.inprocess import call_app

Sent = tuple[dict[str, str], bytes]


def _requests(seed: int) -> list[Sent]:
    """Judgments of a few agents at a few task types (level-ups, specializations,
    achievements, repeats and conflicts among them), and requests to refuse: bad fields,
    a body that is not JSON or not an object, numbers too large, the wrong role or none."""
    rng = random.Random(seed)
    sent: list[Sent] = []
    judge = {**bearer(ORCH), "content-type": "application/json"}
    for i in range(120):
        judgment: dict[str, Any] = {
            "agent_id": rng.choice(["sim_a", "sim_b", "sim_c", "outsider"]),
            "contract_id": f"c-{rng.randrange(100)}",
            "task_type": rng.choice(["audit", "code", "image_generation"]),
            "score": round(rng.uniform(0, 10), rng.choice([0, 1, 3, 12])),
        }
        if rng.random() < 0.3:
            judgment.update(retries=rng.randrange(3), cost=0.05, budget=0.1, duration_ms=900)
        if rng.random() < 0.1:
            judgment["new_agent"] = True
        sent.append((judge, json.dumps(judgment).encode()))
        if i % 15 == 5:  # the same again: the first award, duplicate
            sent.append(sent[-1])
        if i % 10 == 0:
            bad = rng.choice([
                {**judgment, "score": 11}, {**judgment, "score": "high"},
                {**judgment, "unknown": 1}, {k: v for k, v in judgment.items() if k != "agent_id"},
                {**judgment, "cost": 2**60}, {**judgment, "agent_id": "x" * 300},
            ])  # fmt: skip
            sent.append((judge, json.dumps(bad).encode()))
    sent += [
        (judge, b"{not json"),
        (judge, b"[1, 2]"),
        (judge, b'"a string"'),
        (judge, b""),
        ({**bearer(AGENT_A), "content-type": "application/json"}, sent[0][1]),
        ({"content-type": "application/json"}, sent[0][1]),
        ({**bearer(ORCH), "content-type": "text/plain"}, sent[0][1]),
    ]
    return sent


def _answers(sent: list[Sent]) -> tuple[list[tuple[int, str, Any]], int]:
    """Each request's status, content type and JSON on a fresh API with a fixed clock;
    how many the direct handler answered."""
    answered: list[tuple[int, str, Any]] = []
    direct = JudgmentRoute.direct
    counted = [0]

    async def counting(request: Request) -> Response | None:
        answer = await direct(request)
        counted[0] += answer is not None
        return answer

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for headers, content in sent:
            got = await client.post("/oracle/judgments", content=content, headers=headers)
            answered.append((got.status_code, got.headers["content-type"], got.json()))

    JudgmentRoute.direct = staticmethod(counting)
    try:
        call_app({**CONFIG, **TOKENS}, body, clock=FixedClock())
    finally:
        JudgmentRoute.direct = staticmethod(direct)  # the handler found, as a static method
    return answered, counted[0]


@pytest.mark.parametrize("seed", [1, 2])
def test_the_direct_answers_are_the_declared_routes(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same requests on two fresh APIs, directly and through FastAPI's handler alone:
    every status, content type and body is the same; the direct handler answered each
    valid judgment (repeats and conflicts' first payloads included) and nothing else."""
    sent = _requests(seed)
    direct, answered_directly = _answers(sent)

    async def declined(request: Request) -> Response | None:
        del request
        return None

    monkeypatch.setattr(JudgmentRoute, "direct", staticmethod(declined))
    declared, none = _answers(sent)
    assert none == 0
    assert [a[0] for a in direct] == [a[0] for a in declared]
    assert direct == declared
    statuses = [status for status, _, _ in direct]
    assert set(statuses) == {200, 400, 401, 403, 409, 415, 422}  # every way is taken
    assert statuses.count(200) >= 60
    assert any(answer["duplicate"] for status, _, answer in direct if status == 200)
    assert answered_directly == statuses.count(200)  # a conflict: the Oracle raised it
