"""A deliberation among the agents a request names (``agent_names``): who qualifies, and
how each participant is asked.

``named_record`` applies the specification's filter (unknown, offline, unreachable, below
``min_agent_rank``, complexity not allowed: ``domain/deliberation.select_agents``) from
three batched reads of the named agents only, and leaves out an agent whose health is
down on this instance (its breaker open, or pinned: its key missing), with its health's
reason and until when; fewer than two qualified agents is ``TooFewAgents`` (400, each
left-out agent with its reason) and nothing is stored. A named agent nobody knows at all
(never heartbeated, not configured, no profile: a typo, ``fxtrot`` for ``foxtrot``) is
refused before that (``UnknownAgent``, 422 ``invalid_input`` on ``agent_names`` with the
closest known ids): the deliberation would otherwise run without the agent that was
meant. ``participants`` resolves, when the deliberation runs, each agent's declaration,
provider and level allowance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.domain.deliberation import (
    DeliberationRequest,
    ExclusionReason,
    down_detail,
    select_agents,
)
from agentladder.domain.deliberation_record import COST_BASIS, DeliberationRecord
from agentladder.domain.privileges import TaskAllowance
from agentladder.domain.routing.health import HealthStatus
from agentladder.domain.suggestions import did_you_mean
from agentladder.errors import NotFound, TooFewAgents, UnknownAgent
from agentladder.providers.base import Provider
from agentladder.services.agents.registry import Registry
from agentladder.services.deliberations.rounds import Participant
from agentladder.services.oracle.known import unknown_among
from agentladder.services.oracle.service import Oracle
from agentladder.services.routing.health import HealthMonitor
from agentladder.store.base import Store

__all__ = ["named_record", "participants"]


async def named_record(
    request: DeliberationRequest,
    *,
    registry: Registry,
    store: Store,
    oracle: Oracle,
    providers: Mapping[str, Provider],
    deliberation_id: str,
    created_at: float,
    runner: str,
    health: HealthMonitor | None = None,
) -> tuple[DeliberationRecord, dict[str, TaskAllowance]]:
    """The record of a deliberation among the named agents that qualify, and their level
    allowances (read once, used when it runs); ``TooFewAgents`` otherwise."""
    names = request.agent_names or ()
    # Three batched reads of the named agents only, at once.
    online, stats, every_allowance = await asyncio.gather(
        registry.online_among(names),
        store.get_many_stats(names),
        oracle.task_allowances(names, request.task_type, request.complexity),
    )
    ranks = {agent: 0 if agent not in stats else stats[agent].value.rank for agent in names}
    allowances = {agent: every_allowance[agent] for agent in names if agent in online}
    allowed = None
    if request.complexity is not None:
        allowed = {agent: a.allowed for agent, a in allowances.items()}
    reachable = {agent: agent in providers for agent in names}
    selection = select_agents(
        request, online=online, ranks=ranks, allowed=allowed, reachable=reachable,
        down=_down(health, names),
    )  # fmt: skip
    unregistered = [e.agent_id for e in selection.excluded if e.reason is ExclusionReason.UNKNOWN]
    if unregistered:
        await refuse_nobody(unregistered, store, oracle)
    if not selection.enough:
        raise TooFewAgents(
            list(selection.qualified),
            [e.model_dump(mode="json", exclude_none=True) for e in selection.excluded],
        )
    record = DeliberationRecord(
        id=deliberation_id,
        request=request,
        task_type=request.task_type,
        complexity=request.complexity,
        agents=list(selection.qualified),
        excluded=list(selection.excluded),
        created_at=created_at,
        runner=runner,
        cost_basis=COST_BASIS,
    )
    return record, allowances


def _down(health: HealthMonitor | None, names: tuple[str, ...]) -> dict[str, str]:
    """The named agents down on this instance now, each with what its health says."""
    if health is None:
        return {}
    now, found = health.now(), {}
    for agent in names:
        state = health.tracked(agent)
        if state is not None and state.status is HealthStatus.DOWN:
            found[agent] = down_detail(state.reason, state.until, now)
    return found


async def refuse_nobody(names: list[str], store: Store, oracle: Oracle) -> None:
    """``UnknownAgent`` (field ``agent_names``, with the closest known ids) for the first of
    the named agents that never heartbeated (``names``) that nobody knows either (not
    configured, no profile): a typo, which the deliberation would run without. Read only
    when a named agent never heartbeated."""
    nobody = sorted(await unknown_among(store, oracle.agents, names), key=names.index)
    if not nobody:
        return
    typed = nobody[0]
    _, known = await oracle.known.index()
    near = known.closest(typed)
    hint = f"; {did_you_mean(near)}" if near else ""
    raise UnknownAgent(
        typed, near,
        f"names an agent nobody knows (configured, registered or judged before){hint}",
        field="agent_names",
    )  # fmt: skip


async def participants(
    record: DeliberationRecord,
    request: DeliberationRequest,
    known: dict[str, TaskAllowance],
    *,
    oracle: Oracle,
    store: Store,
    agents: Mapping[str, AgentConfig],
    providers: Mapping[str, Provider],
) -> list[Participant]:
    """Each agent of ``record`` as it is asked: its declaration (the configuration's, else
    its registration's), its provider and its allowance (``known``, else read now)."""
    missing = [agent for agent in record.agents if agent not in known]
    if missing:
        known.update(await oracle.task_allowances(missing, request.task_type, request.complexity))
    remote = [agent for agent in record.agents if agent not in agents]
    registrations = await store.get_many_registrations(remote) if remote else {}
    out = []
    for agent in record.agents:
        declared: AgentConfig | None = agents.get(agent)
        if declared is None and agent in registrations:
            declared = registrations[agent].config
        if declared is None:
            raise NotFound("agent", agent)
        out.append(Participant(config=declared, provider=providers[agent], allowance=known[agent]))
    return out
