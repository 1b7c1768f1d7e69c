"""A deliberation whose agents routing chooses (``select`` in the request).

The choice (``RoutingService.route``) is kept in the record: the picks with why each was
chosen, the others with why not, and the seed, which defaults to 48 bits of the SHA-256
of the deliberation's id so that the same deliberation always routes alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import COST_BASIS, DeliberationRecord
from agentladder.errors import InvalidInput
from agentladder.services.routing.service import RoutingService, require_enough

__all__ = ["routed_record", "seed_of"]


def seed_of(deliberation_id: str) -> int:
    """The routing seed of a deliberation without one: from its id (48 bits)."""
    return int.from_bytes(hashlib.sha256(deliberation_id.encode()).digest()[:6], "big")


async def routed_record(
    routing: RoutingService | None,
    request: DeliberationRequest,
    *,
    deliberation_id: str,
    reachable: Collection[str],
    created_at: float,
    runner: str,
) -> DeliberationRecord:
    """The record of a deliberation among the agents routing chooses, among those this
    server can ask (``reachable``); ``TooFewAgents`` when fewer than asked for qualify."""
    spec = request.select
    if spec is None or routing is None:
        raise InvalidInput("select", None, "routing is not set up on this service")
    chosen = await routing.route(
        spec, complexity=request.complexity, min_rank=request.min_agent_rank,
        reachable=set(reachable), seed=seed_of(deliberation_id),
    )  # fmt: skip
    require_enough(chosen, spec.count)
    return DeliberationRecord(
        id=deliberation_id,
        request=request,
        task_type=request.task_type,
        complexity=request.complexity,
        agents=[p.agent_id for p in chosen.agents],
        routing=chosen,
        created_at=created_at,
        runner=runner,
        cost_basis=COST_BASIS,
    )
