"""SimulatedProvider: exact quality without noise, reproducible noise, failures, latency."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, Evaluation, Proposal, ProposeRequest
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider, marked_quality, marker

QUERY = "Which controls reduce payment fraud?"
PROPOSE = ProposeRequest(deliberation_id="d1", round=1, user_query=QUERY)
qualities = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


def evaluate_request(proposal: str) -> EvaluateRequest:
    """Ask to score ``proposal`` for the test query."""
    return EvaluateRequest(deliberation_id="d1", round=1, user_query=QUERY, proposal=proposal)


async def propose(agent: str, quality: float) -> Proposal:
    """One proposal of a noiseless simulated agent of ``quality``."""
    return await SimulatedProvider(agent, SimulatedSettings(quality=quality)).propose(PROPOSE)


async def scores(evaluator: SimulatedProvider, proposal: str, times: int) -> list[float]:
    """``times`` scores of ``proposal`` by ``evaluator``."""
    return [(await evaluator.evaluate(evaluate_request(proposal))).score for _ in range(times)]


@given(quality=qualities)
def test_noise_zero_scores_the_quality_exactly(quality: float) -> None:
    """With noise 0 an evaluation is exactly the proposer's quality, every time."""

    async def body() -> list[float]:
        proposal = await propose("sim_a", quality)
        return await scores(SimulatedProvider("sim_b", SimulatedSettings()), proposal.content, 3)

    assert asyncio.run(body()) == [quality] * 3


@settings(max_examples=50)
@given(quality=qualities, noise=st.floats(min_value=0.01, max_value=10.0), seed=st.integers())
def test_noisy_scores_are_reproducible_and_clamped(quality: float, noise: float, seed: int) -> None:
    """Same seed, same calls: same scores; every score lies in [0, 10]."""
    judge = SimulatedSettings(noise=noise, seed=seed)

    async def body() -> tuple[list[float], list[float]]:
        content = (await propose("sim_a", quality)).content
        first = await scores(SimulatedProvider("judge", judge), content, 20)
        second = await scores(SimulatedProvider("judge", judge), content, 20)
        return first, second

    first, second = asyncio.run(body())
    assert first == second
    assert all(0.0 <= score <= 10.0 for score in first)


def test_noise_varies_scores_around_the_quality() -> None:
    """With noise 1.0, 400 scores of a 6.0 proposal vary and average close to 6.0."""

    async def body() -> list[float]:
        content = (await propose("sim_a", 6.0)).content
        judge = SimulatedProvider("judge", SimulatedSettings(noise=1.0, seed=3))
        return await scores(judge, content, 400)

    values = asyncio.run(body())
    assert len(set(values)) > 300
    assert abs(sum(values) / len(values) - 6.0) < 0.25


def test_different_seeds_or_agents_draw_differently() -> None:
    """Another seed, or another agent with the same seed, gives other noise."""

    async def body(agent: str, seed: int) -> list[float]:
        judge = SimulatedProvider(agent, SimulatedSettings(noise=1.0, seed=seed))
        return await scores(judge, marker("x", 5.0), 5)

    base = asyncio.run(body("judge", 1))
    assert base != asyncio.run(body("judge", 2))
    assert base != asyncio.run(body("other", 1))


@pytest.mark.parametrize(
    "content", ["A real model's answer.", "text [simulated agent=a quality=9]"]
)
def test_unmarked_proposal_scores_neutral_five(content: str) -> None:
    """A proposal that does not start with a marker scores 5.0 with noise 0."""
    judge = SimulatedProvider("judge", SimulatedSettings())
    assert asyncio.run(scores(judge, content, 1)) == [5.0]


def test_failure_rate_one_always_fails_and_zero_never() -> None:
    """failure_rate 1.0: every call is ProviderError('refused'); 0.0: no call fails."""

    async def body() -> None:
        always = SimulatedProvider("bad", SimulatedSettings(failure_rate=1.0, seed=5))
        never = SimulatedProvider("good", SimulatedSettings(failure_rate=0.0, seed=5))
        for _ in range(50):
            with pytest.raises(ProviderError) as caught:
                await always.propose(PROPOSE)
            assert caught.value.kind == "refused"
            with pytest.raises(ProviderError):
                await always.evaluate(evaluate_request("x"))
            await never.propose(PROPOSE)
            await never.evaluate(evaluate_request("x"))

    asyncio.run(body())


def test_partial_failures_are_reproducible() -> None:
    """failure_rate 0.5: the same seed fails the same calls, about half of them."""

    async def outcomes() -> list[bool]:
        agent = SimulatedProvider("flaky", SimulatedSettings(failure_rate=0.5, seed=9))
        results = []
        for _ in range(200):
            try:
                await agent.propose(PROPOSE)
                results.append(True)
            except ProviderError:
                results.append(False)
        return results

    first = asyncio.run(outcomes())
    assert first == asyncio.run(outcomes())
    assert 60 < sum(first) < 140


def test_latency_sleeps_through_the_injected_sleep() -> None:
    """Each call, failed or not, sleeps latency_ms / 1000 s through the injected sleep."""
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    async def body() -> None:
        agent = SimulatedProvider("slow", SimulatedSettings(latency_ms=250), sleep=record)
        await agent.propose(PROPOSE)
        await agent.evaluate(evaluate_request("x"))
        failing = SimulatedSettings(latency_ms=40, failure_rate=1.0)
        with pytest.raises(ProviderError):
            await SimulatedProvider("down", failing, sleep=record).propose(PROPOSE)

    asyncio.run(body())
    assert delays == [0.25, 0.25, 0.04]


def test_proposal_carries_marker_answer_and_usage() -> None:
    """A proposal starts with its marker, mentions the query and reports token counts."""
    proposal: Proposal = asyncio.run(propose("sim_a", 7.5))
    assert proposal.content.startswith("[simulated agent=sim_a quality=7.5] ")
    assert QUERY in proposal.content
    assert marked_quality(proposal.content) == 7.5
    assert proposal.usage.input_tokens > 0
    assert proposal.usage.output_tokens == len(proposal.content) // 4


def test_evaluation_reports_rationale_and_usage() -> None:
    """An evaluation names where its score came from and reports token counts."""
    judge = SimulatedProvider("judge", SimulatedSettings())
    evaluation: Evaluation = asyncio.run(judge.evaluate(evaluate_request(marker("a", 8.0))))
    assert evaluation.score == 8.0
    assert "marked quality 8.0" in evaluation.rationale
    assert evaluation.usage.input_tokens > 0
    assert evaluation.usage.output_tokens > 0
