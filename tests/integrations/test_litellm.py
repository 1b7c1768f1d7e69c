"""LiteLLM's Router with mock deployments against a served ladder: the callback's outcomes
in the ladder's health and stats, the routing strategy's pick by the ladder's evidence,
and LiteLLM's default choice when the ladder is away."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import litellm
import pytest
from litellm.exceptions import BadRequestError, RateLimitError
from litellm.router import Router

from agentladder.domain.routing import Strategy
from agentladder.integrations.litellm import (
    ROUTE_INFO,
    LadderLogger,
    LadderSettings,
    install,
)
from tests.integrations.conftest import ADMIN, ORCH
from tests.served import Server, free_port

MESSAGES: list[Any] = [{"role": "user", "content": "Which controls matter most?"}]


def _text(answer: Any) -> str:
    """The answer's text."""
    text: str = answer.choices[0].message.content
    return text


def _deployment(group: str, agent: str, mock: str) -> dict[str, Any]:
    return {
        "model_name": group,
        "litellm_params": {"model": f"openai/{agent}-model", "api_key": "sk-mock",
                           "mock_response": mock},
        "model_info": {"id": agent},
    }  # fmt: skip


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    """LiteLLM's global callbacks, restored after the test."""
    before = list(litellm.callbacks)
    added = litellm.callbacks
    try:
        yield added
    finally:
        for callback in [c for c in added if c not in before]:
            litellm.logging_callback_manager.remove_callback_from_all_lists(callback)
        litellm.callbacks = before


def _wait(check: Callable[[], bool], what: str, timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not seen in {timeout_s} s: {what}")


async def _settled(logger: LadderLogger, reports: int, timeout_s: float = 15) -> None:
    """Wait on the loop for ``reports`` reports sent or failed (LiteLLM logs after the
    call returns), then close the logger's clients on it."""
    deadline = time.monotonic() + timeout_s
    while logger.sent + logger.failures < reports and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await logger.clients.aclose()


def _agent(ladder: Server, agent: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(ladder.url(f"/agents/{agent}"), timeout=10).json()
    return found


def test_outcomes_reach_health_and_stats(ladder: Server, callbacks: list[Any]) -> None:
    """Answers count as completed, 429s degrade the deployment's agent (down after three
    in a row), 400s are the request's fault and count nowhere."""
    logger = LadderLogger(LadderSettings(url=ladder.base, token=ORCH))
    callbacks.append(logger)
    router = Router(
        model_list=[
            _deployment("fast", "alpha", "hello"),
            _deployment("limited", "bravo", "litellm.RateLimitError"),
            _deployment("strict", "charlie", "litellm.ContextWindowExceededError"),
        ],
        num_retries=0, disable_cooldowns=True,
    )  # fmt: skip

    async def calls() -> None:
        for _ in range(2):
            answer = await router.acompletion(model="fast", messages=MESSAGES)
            assert _text(answer) == "hello"
        for group, error in (("limited", RateLimitError),
                             ("strict", BadRequestError)):  # fmt: skip
            for _ in range(3):
                with pytest.raises(error):
                    await router.acompletion(model=group, messages=MESSAGES)
        await _settled(logger, 8)

    asyncio.run(calls())
    router.completion(model="fast", messages=MESSAGES)  # the sync callback too
    _wait(lambda: logger.sent >= 9, f"9 reports (sent {logger.sent}, failed {logger.failures})")
    logger.clients.close()
    assert logger.failures == 0
    bravo = _agent(ladder, "bravo")["health"]
    assert bravo["status"] == "down", bravo
    assert bravo["failed"] == 3
    assert "RateLimitError" in bravo["last_error"]
    charlie = _agent(ladder, "charlie")
    assert charlie["health"]["status"] == "ok"
    assert charlie["health"]["calls"] == 0, "a bad request is not the deployment's failure"
    alpha = _agent(ladder, "alpha")
    assert alpha["health"] == {**alpha["health"], "status": "ok", "calls": 3, "failed": 0}
    _wait(lambda: _agent(ladder, "alpha")["stats"]["tasks_completed"] >= 3, "alpha's stats")
    _wait(lambda: _agent(ladder, "bravo")["stats"]["tasks_failed"] >= 3, "bravo's stats")
    assert _agent(ladder, "charlie")["stats"]["tasks_failed"] == 0


def _seed(ladder: Server, scores: dict[str, float], task_type: str) -> None:
    judgments = [
        {"agent_id": agent, "contract_id": f"seed-{task_type}-{agent}-{i}",
         "task_type": task_type, "score": score}
        for agent, score in scores.items() for i in range(12)
    ]  # fmt: skip
    auth = {"Authorization": f"Bearer {ORCH}"}
    posted = httpx.post(ladder.url("/oracle/judgments/batch"), json={"judgments": judgments},
                        headers=auth, timeout=30)  # fmt: skip
    assert posted.status_code == 200, posted.text
    fitted = httpx.post(ladder.url("/skills/fit"), headers={"Authorization": f"Bearer {ADMIN}"},
                        timeout=60)  # fmt: skip
    assert fitted.status_code == 200, fitted.text


def _chat_router() -> Router:
    router: Router = Router(model_list=[
        _deployment("chat", "alpha", "from alpha"),
        _deployment("chat", "bravo", "from bravo"),
        _deployment("chat", "charlie", "from charlie"),
    ], num_retries=0)  # fmt: skip
    return router


def test_routing_picks_the_ladders_first(ladder: Server, callbacks: list[Any]) -> None:
    """At a task type where charlie's judgments are best, every request tagged with it is
    charlie's deployment, the ladder's reason on it; at another, where alpha's are, alpha's."""
    _seed(ladder, {"charlie": 9.0, "alpha": 5.0, "bravo": 3.0}, "triage")
    _seed(ladder, {"alpha": 9.0, "bravo": 5.0, "charlie": 3.0}, "summaries")
    settings = LadderSettings(url=ladder.base, token=ORCH, strategy=Strategy.BEST)
    router = _chat_router()
    strategy = install(router, settings)
    seen: list[dict[str, Any]] = []

    class Seen(litellm.integrations.custom_logger.CustomLogger):
        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            seen.append(kwargs["litellm_params"]["model_info"])

    callbacks.append(Seen())

    async def calls() -> list[str]:
        tagged = {"agentladder_task_type": "triage"}
        answers = [
            await router.acompletion(model="chat", messages=MESSAGES, metadata=tagged)
            for _ in range(5)
        ]
        other = await router.acompletion(
            model="chat", messages=MESSAGES, metadata={"agentladder_task_type": "summaries"}
        )
        assert _text(other) == "from alpha"
        await strategy.clients.aclose()
        deadline = time.monotonic() + 15
        while len(seen) < 6 and time.monotonic() < deadline:  # logged after the call
            await asyncio.sleep(0.05)
        return [_text(a) for a in answers]

    assert asyncio.run(calls()) == ["from charlie"] * 5
    sync = router.completion(
        model="chat", messages=MESSAGES, metadata={"agentladder_task_type": "triage"}
    )
    assert _text(sync) == "from charlie"
    strategy.clients.close()
    assert (strategy.asked, strategy.picked, strategy.fallbacks) == (7, 7, 0)
    charlies = [info for info in seen if info["id"] == "charlie"]
    assert len(charlies) == 5, seen
    assert all(info[ROUTE_INFO] for info in charlies), seen


def test_ladder_away_falls_back_to_litellm(callbacks: list[Any]) -> None:
    """With no ladder listening, routing falls back to a deployment of the group (LiteLLM's
    random choice), and the callback counts its failed reports without raising."""
    away = LadderSettings(url=f"http://127.0.0.1:{free_port()}", token=ORCH, timeout_s=2)
    logger = LadderLogger(away)
    callbacks.append(logger)
    router = _chat_router()
    strategy = install(router, away)

    async def calls() -> list[str]:
        answers = [await router.acompletion(model="chat", messages=MESSAGES) for _ in range(6)]
        await _settled(logger, 6)
        await strategy.clients.aclose()
        return [_text(a) for a in answers]

    answered = asyncio.run(calls())
    assert set(answered) <= {"from alpha", "from bravo", "from charlie"}
    assert (strategy.asked, strategy.picked, strategy.fallbacks) == (6, 0, 6)
    assert (logger.sent, logger.failures) == (0, 6)
