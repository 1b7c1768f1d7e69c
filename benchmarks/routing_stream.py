"""A stream of routed requests on the simulated fleet (``routing_fleet``), each judged
answer fed back as evidence, as the gateway's checks feed it.

The fleet's history is imported (``mt_bench_data.imported_services``: ``agentladder
import --scale 1-10``, fit included) and every agent registered with its prices. Then each
request, of a seeded random task type, is routed through the real ``RoutingService.route``
(``count`` 1, ``cheapest_above``, ``quality_floor_share`` ``share``, the given
``explore_share`` and ``confidence``, a seed per request); the chosen agent's answer is
judged (the fleet's seeded score) and the judgment submitted to the Oracle as a gateway
check submits it (``submit_for_judgment``: the Oracle's award and the skill model's
evidence; ``success`` when the score reaches the checks' default pass score, 5); the
skill model is fitted every ``fit_every`` requests, as ``serve`` fits in the background.

What it measures: the judged quality (0-10) and cost of the routed answers against the
best single agent answering the same requests (the agent with the highest history mean),
and per task type the requests of that type routed before a cheaper agent than the type's
reference (the best available agent, whose skill the floor is a share of) is proven: a
probe routing with no exploration picks an agent that costs less than the reference with
P(skill >= floor) >= confidence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from agentladder.domain.routing.spec import RouteSpec, Strategy
from agentladder.domain.scales import to_ten
from agentladder.services.oracle.models import JudgmentRequest
from benchmarks.mt_bench_data import imported_services
from benchmarks.routing_fleet import TYPES, Fleet
from benchmarks.routing_replay import best_single, register

__all__ = ["PASS_SCORE", "Stream", "run_stream"]

PASS_SCORE = 5.0
"""The gateway checks' default pass score (0-10): a judgment's ``success``."""


@dataclass
class Stream:
    """What one stream delivered, against the best single agent on the same requests."""

    quality: float = 0.0  # summed judged scores (0-10) of the routed answers
    best_quality: float = 0.0
    cost: float = 0.0
    best_cost: float = 0.0
    requests: int = 0
    explored: int = 0
    until_proven: dict[str, int | None] = field(default_factory=dict)
    """Per task type: requests of the type routed before a cheaper agent was proven (None:
    not within the stream)."""
    proven_agent: dict[str, str] = field(default_factory=dict)
    """Per task type where one was: the cheaper agent first proven."""

    @property
    def quality_ratio(self) -> float:
        return self.quality / self.best_quality

    @property
    def cost_ratio(self) -> float:
        return self.cost / self.best_cost


async def run_stream(
    fleet: Fleet,
    folder: Path,
    *,
    requests: int,
    share: float,
    explore_share: float,
    confidence: float,
    fit_every: int,
    seed: int,
) -> Stream:
    """The stream of ``requests`` routed requests (see the module docstring)."""
    history = fleet.history()
    best = best_single(history)
    prices = {a.name: a.price for a in fleet.agents}
    rng = random.Random(f"stream:{seed}")
    out = Stream(until_proven=dict.fromkeys(TYPES))
    seen = dict.fromkeys(TYPES, 0)
    proven: set[str] = set()
    async with imported_services(history, folder) as services:
        await register(services, prices)
        for index in range(requests):
            task_type = rng.choice(TYPES)
            spec = RouteSpec(
                count=1, task_type=task_type, strategy=Strategy.CHEAPEST_ABOVE,
                quality_floor_share=share, confidence=confidence,
                explore_share=explore_share, seed=seed * 1_000_003 + index,
            )  # fmt: skip
            if task_type not in proven:  # the probe: what routing proves, exploring nothing
                probe = spec if explore_share == 0.0 else spec.model_copy(
                    update={"explore_share": 0.0}
                )  # fmt: skip
                shown = await services.routing.route(probe, online_only=False)
                pick, reference = shown.agents[0], shown.reference
                if (
                    reference is not None
                    and (pick.p_floor or 0.0) >= confidence
                    and prices[pick.agent_id].per_round < prices[reference.agent_id].per_round
                ):
                    proven.add(task_type)
                    out.until_proven[task_type] = seen[task_type]
                    out.proven_agent[task_type] = pick.agent_id
            answer = await services.routing.route(spec, online_only=False)
            chosen = answer.agents[0]
            out.explored += chosen.reason is Strategy.EXPLORE
            request = f"stream-{seed}-{index}"
            score = fleet.score(chosen.agent_id, task_type, request)
            out.quality += to_ten(score, "1-10")
            out.best_quality += to_ten(fleet.score(best, task_type, request), "1-10")
            out.cost += prices[chosen.agent_id].per_round
            out.best_cost += prices[best].per_round
            out.requests += 1
            seen[task_type] += 1
            await services.oracle.submit_for_judgment(
                JudgmentRequest(
                    agent_id=chosen.agent_id, contract_id=request, task_type=task_type,
                    score=to_ten(score, "1-10"), success=to_ten(score, "1-10") >= PASS_SCORE,
                    judge="gpt-4",
                )
            )  # fmt: skip
            if fit_every and (index + 1) % fit_every == 0:
                await services.skill.fit(force=True)
    return out
