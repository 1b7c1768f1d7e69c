"""Simulated agents: deterministic stand-ins for models, for the demo, tests and simulations.

A proposal starts with a marker that carries its agent's quality, e.g.
``[simulated agent=sim_a quality=7.5] ...``. A simulated evaluator scores a proposal at
the quality in its marker plus Gaussian noise (standard deviation: the *evaluator's*
``noise``), clamped to 0..10; a proposal without a marker (a real model's) is scored
5.0 plus noise. With noise 0 the score is the quality exactly.

Every call sleeps ``latency_ms`` (the ``sleep`` is injectable), then fails with
``ProviderError('refused')`` with probability ``failure_rate``. All randomness comes from
one ``random.Random`` per provider, seeded from the agent id and ``seed``: the same agent
with the same seed and the same sequence of calls gives the same results. Each call
draws the same random numbers whatever the settings, so changing ``failure_rate`` does
not change the noise of the calls that succeed.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections.abc import Awaitable, Callable

from agentladder.errors import ProviderError
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Usage,
)
from agentladder.providers.prompts import (
    ChatMessage,
    evaluate_messages,
    prompt_chars,
    propose_messages,
)
from agentladder.providers.settings import SimulatedSettings

__all__ = ["NEUTRAL_QUALITY", "SimulatedProvider", "marked_quality", "marker"]

NEUTRAL_QUALITY = 5.0
"""The true quality a simulated evaluator assumes for a proposal without a marker."""

_MARKER_RE = re.compile(r"\s*\[simulated agent=(\S+?) quality=([^\]\s]+)\]")
_CHARS_PER_TOKEN = 4

Sleep = Callable[[float], Awaitable[object]]


def marker(agent_id: str, quality: float) -> str:
    """The marker a simulated proposal starts with; ``repr`` keeps the float exact."""
    return f"[simulated agent={agent_id} quality={float(quality)!r}]"


def marked_quality(content: str) -> float | None:
    """The quality in the marker ``content`` starts with, clamped to 0..10; else None."""
    found = _MARKER_RE.match(content)
    if found is None:
        return None
    try:
        quality = float(found.group(2))
    except ValueError:
        return None
    return _clamp(quality) if math.isfinite(quality) else None


def _clamp(score: float) -> float:
    return min(10.0, max(0.0, score))


def _tokens(chars: int) -> int:
    return max(1, chars // _CHARS_PER_TOKEN)


def _usage(messages: list[ChatMessage], reply: str) -> Usage:
    """Plausible token counts: about four characters per token, as for English text."""
    return Usage(input_tokens=_tokens(prompt_chars(messages)), output_tokens=_tokens(len(reply)))


def _brief(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class SimulatedProvider:
    """A simulated agent with the quality, noise, latency and failures of its settings."""

    def __init__(
        self,
        agent_id: str,
        settings: SimulatedSettings,
        *,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.agent_id = agent_id
        self.settings = settings
        self._sleep = sleep
        self._rng = random.Random(f"{agent_id}:{settings.seed}")

    async def _call(self, what: str) -> float:
        """Sleep the latency, fail with the failure rate; the standard normal draw to use."""
        fails = self._rng.random() < self.settings.failure_rate
        draw = self._rng.gauss(0.0, 1.0)
        if self.settings.latency_ms > 0:
            await self._sleep(self.settings.latency_ms / 1000.0)
        if fails:
            rate = self.settings.failure_rate
            raise ProviderError(
                "refused",
                f"simulated agent {self.agent_id!r} refused to {what} (failure_rate={rate})",
            )
        return draw

    async def propose(self, request: ProposeRequest) -> Proposal:
        """A brief answer to the query that starts with this agent's quality marker."""
        await self._call("propose")
        text = f"Round {request.round} answer to {_brief(request.user_query)!r}"
        if request.feedback:
            text += f", corrected after feedback {_brief(request.feedback, 40)!r}"
        content = f"{marker(self.agent_id, self.settings.quality)} {text}."
        return Proposal(content=content, usage=_usage(propose_messages(request), content))

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The marked quality (or 5.0) plus this evaluator's noise, clamped to 0..10."""
        draw = await self._call("evaluate")
        quality = marked_quality(request.proposal)
        base = NEUTRAL_QUALITY if quality is None else quality
        noise = self.settings.noise
        score = _clamp(base + noise * draw) if noise > 0 else base
        source = "no simulated marker" if quality is None else "marked quality"
        rationale = f"simulated: {source} {base!r}, noise sd {noise!r} -> {score:.3f}"
        return Evaluation(
            score=score, rationale=rationale, usage=_usage(evaluate_messages(request), rationale)
        )

    async def aclose(self) -> None:
        """Nothing to release."""
