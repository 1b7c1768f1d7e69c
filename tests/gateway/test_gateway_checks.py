"""Checks by earned trust, with the gateway in-process (OpenAI's async client through
httpx's ASGI transport) in front of the local providers (``provider.py``) and a judge the
test holds (``judging.py``)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from agentladder.api.app import create_app
from agentladder.config import parse_settings
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings
from agentladder.services.container import Services, build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import judgment_key
from tests.gateway.judging import Judging, gateway_config
from tests.gateway.provider import Providers
from tests.served import free_port

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
AUDIT = {"x-agentladder-task-type": "audit"}

Body = Callable[[openai.AsyncOpenAI, Services, Judging], Awaitable[None]]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key variables."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    monkeypatch.setenv("GW_KEY_BRAVO", "sk-bravo-secret")


def run(
    config: dict[str, Any], body: Body, judging: Judging, seed: int = 7, key: str = "local"
) -> None:
    """The services of ``config`` (memory store, a seeded Sentinel), ``judging`` as the
    gateway's judge, and OpenAI's async client on the app (with the API key ``key``);
    everything closed after."""

    async def main() -> None:
        services = await build_services(parse_settings(config), store_url="memory://", seed=seed)
        judging.install(services)
        transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
        http = httpx.AsyncClient(transport=transport, base_url="http://localhost")
        client = openai.AsyncOpenAI(
            base_url="http://localhost/v1", api_key=key, max_retries=0,
            http_client=http,  # type: ignore[arg-type]  # its httpx fork takes httpx's client
        )  # fmt: skip
        try:
            await body(client, services, judging)
        finally:
            await client.close()
            await services.close()

    asyncio.run(main())


async def ask(
    client: openai.AsyncOpenAI, model: str = "alpha", headers: dict[str, str] | None = None
) -> Mapping[str, str]:
    """One request; the response's headers."""
    raw = await client.chat.completions.with_raw_response.create(
        model=model, messages=ASK, extra_headers=headers or AUDIT
    )
    assert raw.parse().choices[0].message.content == f"answer from {model}"
    return raw.headers


async def trusted(services: Services, agent: str, count: int = 12, score: float = 8.5) -> None:
    """Judgments at ``audit`` that take ``agent`` past rookie there (its rate below 1)."""
    for i in range(count):
        await services.oracle.submit_for_judgment(
            JudgmentRequest(
                agent_id=agent, contract_id=f"seed-{agent}-{i}", task_type="audit", score=score
            )
        )


async def settled(services: Services, outcome: str, count: int, agent: str = "alpha") -> None:
    """Wait (up to 30 s) until ``count`` checks of ``agent`` at audit ended ``outcome``."""
    checks = services.gateway.totals.checks
    async with asyncio.timeout(30):
        while checks[agent, "audit", outcome] < count:
            await asyncio.sleep(0.01)


def test_the_share_checked_matches_the_effective_rate_over_2000_requests(
    providers: Providers,
) -> None:
    """2,000 answers of an agent past rookie at audit: the share whose header says ``yes``
    is within 4 standard errors of its effective rate (read before and after: unchanged,
    since the judge is held and no check lands), and every ``yes`` is queued or dropped."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        await trusted(services, "alpha")
        rate = (await services.oracle.get_effective_rate("alpha", "audit")).effective_rate
        assert 0.0 < rate < 1.0
        judging.release.clear()  # no check ends during the run: the rate stays
        said: list[str] = []
        for _ in range(100):
            found = await asyncio.gather(*(ask(client) for _ in range(20)))
            said += [headers["x-agentladder-check"] for headers in found]
        after = (await services.oracle.get_effective_rate("alpha", "audit")).effective_rate
        assert after == rate
        n, checked = len(said), said.count("yes")
        assert set(said) <= {"yes", "no"}
        bound = 4 * math.sqrt(n * rate * (1 - rate))
        assert abs(checked - n * rate) <= bound, (checked, n * rate, bound)
        totals = services.gateway.totals.checks
        assert totals["alpha", "audit", "started"] == min(checked, 4)  # the 4 workers, held
        assert judging.asked == min(checked, 4)
        assert totals["alpha", "audit", "dropped"] == 0

    run(gateway_config(providers.base_url), body, Judging())


def test_a_check_lands_as_a_judgment_by_the_judge_under_the_contract(
    providers: Providers,
) -> None:
    """A rookie's answer (rate 1: checked) is judged: a judgment under the request's
    contract id by ``gateway-judge:referee`` at the task type, with the judge's score, and a
    passed validation; the skill model has one observation of the answer (the judge's
    score, not its score and its verdict); the judge saw the rubric of the task type and
    the answer; its cost is counted at its prices."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        headers = await ask(client)
        assert headers["x-agentladder-check"] == "yes"
        await settled(services, "passed", 1)
        contract = headers["x-agentladder-contract"]
        event = await services.store.get_event("alpha", judgment_key(contract))
        assert event is not None
        assert event.payload["score"] == 9.0
        assert event.payload["judge"] == "gateway-judge:referee"
        assert event.payload["task_type"] == "audit"
        assert event.payload["success"] is True
        verdict = await services.store.get_event("alpha", f"validation:{contract}")
        assert verdict is not None
        assert verdict.payload["passed"] is True
        skill = [e.key for e in await services.store.skill_events(after=0, limit=1000)]
        assert [k for k in skill if contract in k] == [f"judgment:alpha:{contract}"]
        prompt = judging.seen[0]["messages"][1]["content"]
        assert "Name the controls that matter." in prompt
        assert "answer from alpha" in prompt
        assert "Which controls matter?" in prompt
        assert judging.seen[0]["response_format"] == {"type": "json_object"}
        spent = services.gateway.totals.judge_cost_usd["gateway-judge:referee"]
        assert spent == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)

    run(gateway_config(providers.base_url), body, Judging(score=9.0))


def test_a_streamed_answer_is_checked_once_whole(providers: Providers) -> None:
    """``stream: true``: the header is known before the first chunk; the check is queued
    once the stream is whole and the judge sees the whole streamed text."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        raw = await client.chat.completions.with_raw_response.create(
            model="alpha", messages=ASK, stream=True, extra_headers=AUDIT
        )
        assert raw.headers["x-agentladder-check"] == "yes"
        pieces = [c.choices[0].delta.content or "" async for c in raw.parse() if c.choices]
        assert "".join(pieces) == "answer from alpha"
        await settled(services, "passed", 1)
        assert "answer from alpha" in judging.seen[0]["messages"][1]["content"]

    run(gateway_config(providers.base_url), body, Judging())


def test_a_failed_check_puts_the_agent_on_probation_until_it_clears(
    providers: Providers,
) -> None:
    """A check scored under audit's pass score (7) is a failed judgment: the agent is on
    probation, and every next answer is checked (``yes``) until as many checks passed as
    its clearance asks; then its level's rate holds again (some ``no``)."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        await trusted(services, "alpha")
        judging.score = 2.0
        while (await ask(client))["x-agentladder-check"] != "yes":
            pass
        await settled(services, "failed", 1)
        rate = await services.oracle.get_effective_rate("alpha", "audit")
        assert rate.effective_rate == 1.0
        assert rate.reason.value == "probation"
        assert rate.clearance_left is not None
        judging.score = 9.0
        left = rate.clearance_left
        for passed in range(1, left + 1):
            assert (await ask(client))["x-agentladder-check"] == "yes"
            await settled(services, "passed", passed)
        cleared = await services.oracle.get_effective_rate("alpha", "audit")
        assert cleared.clearance_left is None
        assert cleared.effective_rate < 1.0
        said = [(await ask(client))["x-agentladder-check"] for _ in range(60)]
        assert "no" in said

    config = gateway_config(providers.base_url)
    config["sentinel"] = {"horizon": 0, "aoql": 0.1}  # a short clearance: 7 at 20 %
    run(config, body, Judging())


@pytest.mark.parametrize("trouble", ["slow", "500", "refused"])
def test_a_slow_or_failing_judge_never_delays_or_fails_the_request(
    providers: Providers, trouble: str
) -> None:
    """A judge blocked on an event the test holds, one that answers 500, or one nobody
    listens for: every request is answered, as many as with the judge off in the same
    test, while the checks wait (the judge still blocked) or are retried, then given up
    as errors (two attempts each)."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        if trouble == "slow":
            judging.release.clear()
        elif trouble == "500":
            judging.status = 500
        else:
            held = services.gateway.checks
            assert held is not None
            assert held.prices is not None
            nobody = f"http://127.0.0.1:{free_port()}/v1"  # connection refused
            held.judge = OpenAIProvider(held.prices, OpenAISettings(base_url=nobody))
        answered = {"judged": 0, "off": 0}
        async with asyncio.timeout(120):  # a deadlock guard: a request held by a check fails
            for _ in range(10):
                headers = await ask(client)
                assert headers["x-agentladder-check"] == "yes"
                answered["judged"] += 1
            checks, services.gateway.checks = services.gateway.checks, None  # the judge off
            for _ in range(10):
                assert (await ask(client))["x-agentladder-check"] == "no"
                answered["off"] += 1
            services.gateway.checks = checks
        assert answered["judged"] == answered["off"] == 10
        totals = services.gateway.totals.checks
        if trouble == "slow":
            assert not judging.release.is_set()
            assert judging.asked >= 1  # the judge still holds a check: the requests went on
            assert totals["alpha", "audit", "passed"] == 0
        else:
            await settled(services, "error", 10)
            assert totals["alpha", "audit", "retried"] == 10
            assert totals["alpha", "audit", "passed"] == 0

    run(gateway_config(providers.base_url, attempts=2, retry_s=0.05), body, Judging())


def test_the_judge_never_judges_its_own_agent(providers: Providers) -> None:
    """With the agent alpha as the judge: alpha's answers are not checked (``no``, counted
    ``own_agent``), bravo's are, by alpha."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        assert (await ask(client, "alpha"))["x-agentladder-check"] == "no"
        assert (await ask(client, "bravo"))["x-agentladder-check"] == "yes"
        await settled(services, "passed", 1, agent="bravo")
        totals = services.gateway.totals.checks
        assert totals["alpha", "audit", "own_agent"] == 1
        assert totals["alpha", "audit", "started"] == 0
        assert judging.asked == 1

    config = gateway_config(providers.base_url)
    config["gateway"]["judge"] = {"agent": "alpha", "pass_scores": {"audit": 7.0}}
    run(config, body, Judging())


def test_the_judges_agent_is_never_routed(providers: Providers) -> None:
    """With the agent alpha as the judge, routed requests go to bravo even when bravo's
    failed check (probation) ranks it under alpha, which has no evidence: an answer by the
    judge could not be checked. With nobody else qualifying, the 400 says why alpha was
    left out."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        await services.oracle.submit_for_judgment(  # a failed check, as a judge makes it
            JudgmentRequest(agent_id="bravo", contract_id="failed", task_type="audit",
                            score=2.0, success=False)
        )  # fmt: skip
        for _ in range(10):
            raw = await client.chat.completions.with_raw_response.create(
                model="route:audit", messages=ASK
            )
            assert raw.headers["x-agentladder-agent"] == "bravo"
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(
                model="route:audit", messages=ASK, extra_headers={"x-agentladder-tags": "sql"}
            )
        message = str(refused.value)
        assert "alpha (unreachable): the gateway's judge (gateway.judge.agent) is never" in message
        assert "bravo (tags): does not declare sql" in message
        assert services.gateway.totals.requests["alpha", "audit", "answered"] == 0

    config = gateway_config(providers.base_url)
    config["gateway"]["judge"] = {"agent": "alpha", "pass_scores": {"audit": 7.0}}
    run(config, body, Judging())


def test_checks_left_at_shutdown_are_counted_deferred(providers: Providers) -> None:
    """Checks still queued or being judged when the service stops, after the grace
    (``api.shutdown_grace_s``), are counted ``deferred`` (left in the store for the next
    start); past ``queue_size`` checks outstanding, a check is backlogged in the store, and
    still promised."""
    totals: dict[str, Any] = {}

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        judging.release.clear()
        for _ in range(5):
            assert (await ask(client))["x-agentladder-check"] == "yes"
        totals["checks"] = services.gateway.totals.checks
        totals["stored"] = len(await services.store.list_checks(100))

    config = gateway_config(providers.base_url, workers=1, queue_size=2)
    run(config, body, Judging())
    checks = totals["checks"]
    assert checks["alpha", "audit", "started"] == 1
    assert checks["alpha", "audit", "backlogged"] == 3  # past the 2 outstanding
    assert checks["alpha", "audit", "dropped"] == 0
    assert checks["alpha", "audit", "deferred"] == 2  # one being judged, one queued
    assert totals["stored"] == 5


def test_a_check_promised_is_kept_and_run_and_past_the_backlog_none_is_promised(
    providers: Providers,
) -> None:
    """With one check outstanding at most and the judge held: the first 11 answers are
    promised a check (1 queued, 10 backlogged in the store), the next ones are told ``no``
    (counted ``dropped``); once the judge answers, every promised check is judged."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        judging.release.clear()
        told = [(await ask(client))["x-agentladder-check"] for _ in range(13)]
        assert told == ["yes"] * 11 + ["no"] * 2
        checks = services.gateway.totals.checks
        assert (checks["alpha", "audit", "backlogged"], checks["alpha", "audit", "dropped"]) == (
            10, 2,
        )  # fmt: skip
        judging.release.set()
        for _ in range(1000):
            if checks["alpha", "audit", "passed"] == 11:
                break
            await asyncio.sleep(0.02)
        assert checks["alpha", "audit", "passed"] == 11
        assert await services.store.list_checks(100) == []

    config = gateway_config(providers.base_url, workers=1, queue_size=1)
    run(config, body, Judging())


def test_after_a_fallback_the_header_speaks_of_the_agent_that_answered(
    providers: Providers,
) -> None:
    """``route:audit`` tries bravo first (the better at audit), whose provider fails, then
    alpha, which answers: the Sentinel decided once, for alpha (a rookie at audit: ``yes``),
    and the check's judgment is alpha's; bravo drew nothing and was judged nothing new."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        await trusted(services, "bravo", score=9.5)
        await services.oracle.submit_for_judgment(
            JudgmentRequest(agent_id="alpha", contract_id="seed-alpha", task_type="audit",
                            score=3.0)
        )  # fmt: skip
        before = sum(services.sentinel.decisions.values())
        raw = await client.chat.completions.with_raw_response.create(
            model="route:audit", messages=ASK
        )
        assert raw.headers["x-agentladder-agent"] == "alpha"
        assert raw.headers["x-agentladder-check"] == "yes"
        assert sum(services.sentinel.decisions.values()) == before + 1
        await settled(services, "passed", 1)
        contract = raw.headers["x-agentladder-contract"]
        assert await services.store.get_event("alpha", judgment_key(contract)) is not None
        assert await services.store.get_event("bravo", judgment_key(contract)) is None

    config = gateway_config(providers.base_url)
    config["agents"][1]["backend"]["model"] = "fail:bravo"
    run(config, body, Judging())


def test_stored_checks_are_taken_over_only_from_an_instance_whose_lease_ran_out(
    providers: Providers,
) -> None:
    """A check stored by another instance whose lease is live is left to it; once that
    lease is dropped, ``pickup`` takes it over (``recovered``) and it is judged and
    deleted. A stored check older than ``retention_s`` is given up (``error``) and
    deleted, never judged."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        checks, store = services.gateway.checks, services.store
        assert checks is not None
        assert checks.queue is not None
        now = time.time()
        mine = checks.pending("gw-other", "alpha", "audit", ASK, now, "answer from alpha")
        await store.put_check(mine.model_copy(update={"owner": "other"}), 0)
        old = checks.pending("gw-old", "alpha", "audit", ASK, now - 7200, "answer from alpha")
        await store.put_check(old.model_copy(update={"owner": "gone"}), 0)
        await store.renew_lease("other", now + 60)
        assert await checks.queue.pickup() == 0  # gw-other is the live instance's
        assert [c.value.contract_id for c in await store.list_checks(10)] == ["gw-other"]
        totals = services.gateway.totals.checks
        assert totals["alpha", "audit", "error"] == 1
        await store.drop_lease("other")
        assert await checks.queue.pickup() == 1
        await settled(services, "passed", 1)
        assert totals["alpha", "audit", "recovered"] == 1
        assert await store.get_event("alpha", judgment_key("gw-other")) is not None
        assert await store.get_event("alpha", judgment_key("gw-old")) is None
        async with asyncio.timeout(30):
            while await store.list_checks(10):
                await asyncio.sleep(0.01)
        assert judging.asked == 1

    run(gateway_config(providers.base_url, retention_s=3600), body, Judging())


def test_a_check_given_up_is_deleted_from_the_store(providers: Providers) -> None:
    """A judge that answers 500 to every attempt: after ``attempts`` (3) the check is
    counted ``error`` once, 2 ``retried`` before, and nothing of it is left stored."""

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        judging.status = 500
        assert (await ask(client))["x-agentladder-check"] == "yes"
        assert len(await services.store.list_checks(10)) == 1
        await settled(services, "error", 1)
        totals = services.gateway.totals.checks
        assert totals["alpha", "audit", "retried"] == 2
        assert judging.asked == 3
        assert await services.store.list_checks(10) == []

    run(gateway_config(providers.base_url, attempts=3, retry_s=0.05), body, Judging())
