"""What the gateway keeps of an answer (``ServedRequest``): for a caller's feedback, the
agent, caller, task type and time; for ``GET /routing/savings`` (docs/routing.md, "Does
routing pay?"), the routing's strategy and reference, what the answer cost against what
the reference would have cost for the same tokens, and what classifying the request cost
(routing's own cost). Pure: no I/O.

A non-streamed answer's record is made whole at once; a stream's when it is decided
(before its first byte goes: feedback may name it) and again, ``costed``, at its end,
whatever the end, with what was relayed (what its caller is charged: ``bills.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.domain.routing.spec import Routing
from agentladder.providers.base import Usage
from agentladder.providers.openai import call_cost
from agentladder.store.served import ServedRequest

__all__ = ["costed", "served_record"]


def served_record(
    *, contract_id: str, agent_id: str, caller: str, task_type: str | None, at: float,
    routing: Routing | None, usage: Usage | None, agents: Mapping[str, AgentConfig],
    classifier_cost: float | None = None, request_id: str | None = None,
) -> ServedRequest:  # fmt: skip
    """The record of one answer; ``routing`` None for an agent the caller named, ``usage``
    None while a stream runs (``costed`` at its end), ``classifier_cost`` what classifying
    the request cost (None: not asked), ``request_id`` the caller's id of the request
    (``request_ids.py``)."""
    reference = None if routing is None else routing.reference
    record = ServedRequest(
        contract_id=contract_id, agent_id=agent_id, caller=caller, task_type=task_type, at=at,
        routed=None if routing is None else routing.strategy,
        reference_agent=None if reference is None else reference.agent_id,
        reference_skill=None if reference is None else reference.skill,
        reference_sd=None if reference is None else reference.sd,
        quality_floor=None if routing is None else routing.quality_floor,
        classifier_cost_usd=classifier_cost, request_id=request_id,
    )  # fmt: skip
    return record if usage is None else costed(record, usage, agents)


def costed(record: ServedRequest, usage: Usage, agents: Mapping[str, AgentConfig]) -> ServedRequest:
    """``record`` with the answer's tokens, its cost at its agent's declared prices and,
    routed, the same tokens at the reference's."""
    reference = None if record.reference_agent is None else agents.get(record.reference_agent)
    agent = agents.get(record.agent_id)
    return record.model_copy(
        update={
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": None if agent is None else call_cost(agent, usage),
            "reference_cost_usd": None if reference is None else call_cost(reference, usage),
        }
    )
