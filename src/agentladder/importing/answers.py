"""Who answered an imported Inspect sample, under which contract, and what it cost,
settled against the store before the sample is applied (docs/import.md, "Runs through
the gateway"). Only for a sample whose agent no ``--agent`` mapped (``Item.named``): a
mapping always wins.

1. **Answered through the gateway.** The sample's model calls carry the ids the gateway
   knows them by: the contract id it answered with in ``x-request-id`` (Inspect's
   ``ModelEvent.request_ids``), and the id Inspect sent (``x-irid``, kept with the
   served record). The store's served records (``Store.find_served``) name the agent
   that answered each. The sample is a judgment of the agent that answered its **last**
   model call found (the call whose output was scored) and of that answer's contract:
   ``judgment:<contract id>``, the key the gateway's own check of the same answer
   writes. So importing twice adds nothing, and an answer the gateway's check already
   judged is not judged again: it is counted as a duplicate (``Settled.judged``), the
   check's judgment being that answer's one judgment (a check that runs after the
   import finds the import's judgment and records only its verdict).
2. **A model named for a known agent.** Else, a model name ``<provider>/<agent id>``
   whose part after the provider is an agent the Oracle knows (configured, registered,
   or with a profile): that agent (``openai/ace`` is ``ace``).
3. **Else** the id derived from the whole name, as before (``openai-route-audit``); a
   sample of a routed run (``<provider>/route...``) comes here only when no record was
   found (a log from elsewhere, a store wiped, records past ``gateway.feedback_days``):
   counted in ``Settled.unfound`` for the summary's warning.

Cost: the sample's tokens at the settled agent's configured prices, else at the prices
the store keeps for it (its registration: the declaration its server or heartbeat
made), else what ``inspect_samples`` found (the log's own ``total_cost``, or 0).

Pure rules (``last_answer``, ``agent_part``, ``routed_model``) and one async step
(``settle``) that reads the store in a few batched calls per batch of items.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agentladder.domain.agents import AgentConfig, validate_agent_name
from agentladder.domain.eval_mapping import token_cost
from agentladder.domain.frozen import replaced
from agentladder.errors import InvalidInput
from agentladder.importing.items import Item
from agentladder.services.oracle.known import unknown_among
from agentladder.services.oracle.service import judgment_key, stored_history
from agentladder.store.base import Store
from agentladder.store.served import ServedRequest

__all__ = ["Settled", "agent_part", "last_answer", "routed_model", "settle"]


@dataclass
class Settled:
    """A batch settled: the items to apply (``ready``), those whose answer the gateway
    judged already (``judged``: duplicates, not applied), how many samples were
    attributed by the gateway's records (``through_gateway``), and the samples of routed
    runs whose answers no record names (``unfound``: where each is)."""

    ready: list[Item] = field(default_factory=list)
    judged: list[Item] = field(default_factory=list)
    through_gateway: int = 0
    unfound: list[str] = field(default_factory=list)


def last_answer(
    calls: Sequence[Sequence[str]], found: Mapping[str, ServedRequest]
) -> ServedRequest | None:
    """The record of the last call any of whose ids ``found`` holds (a call's ids in the
    order given: the first found names it)."""
    for ids in reversed(calls):
        for one in ids:
            if one in found:
                return found[one]
    return None


def agent_part(model: str) -> str | None:
    """The part of ``provider/name`` after the provider when it is a valid agent id
    (None without a provider, or when it is not one)."""
    provider, sep, rest = model.partition("/")
    if not sep or not provider or not rest:
        return None
    try:
        return validate_agent_name(rest, "model")
    except (InvalidInput, ValueError):
        return None


def routed_model(model: str) -> bool:
    """Whether ``provider/name`` asks the gateway to route (``route`` or ``route:...``)."""
    _, sep, rest = model.partition("/")
    return bool(sep) and (rest == "route" or rest.startswith("route:"))


async def settle(
    store: Store, configured: Mapping[str, AgentConfig], items: Sequence[Item]
) -> Settled:
    """``items`` (in order) with each named sample's agent, contract and cost settled (the
    module says how); the others as they are."""
    named = [item for item in items if item.named is not None and item.request is not None]
    if not named:
        return Settled(ready=list(items))
    ids = {one for item in named if item.named for call in item.named.calls for one in call}
    found = await store.find_served(ids) if ids else {}
    answers: dict[int, ServedRequest] = {}
    for item in named:
        assert item.named is not None
        answer = last_answer(item.named.calls, found)
        if answer is not None:
            answers[id(item)] = answer
    parts = {
        part
        for item in named
        if id(item) not in answers and item.named and (part := agent_part(item.named.model))
    }
    known = parts - await unknown_among(store, configured, parts) if parts else set()
    agents: dict[int, str] = {}
    for item in named:
        assert item.named is not None
        assert item.request is not None
        if id(item) in answers:
            agents[id(item)] = answers[id(item)].agent_id
        else:
            part = agent_part(item.named.model)
            agents[id(item)] = part if part in known else item.request.agent_id
    prices = await _prices(store, configured, set(agents.values()))
    judged = await _judged(store, [(item, answers[id(item)]) for item in named
                                   if id(item) in answers])  # fmt: skip
    settled = Settled(through_gateway=len(answers))
    for item in items:
        if item.named is None or item.request is None:
            settled.ready.append(item)
            continue
        answer = answers.get(id(item))
        agent = agents[id(item)]
        changes: dict[str, object] = {"agent_id": agent}
        if answer is not None:
            changes["contract_id"] = answer.contract_id
        elif routed_model(item.named.model):
            settled.unfound.append(item.where)
        price = prices.get(agent)
        if price is not None:
            changes["cost"] = token_cost(*item.named.tokens, *price)
        done = dataclasses.replace(item, request=replaced(item.request, **changes))
        (settled.judged if id(item) in judged else settled.ready).append(done)
    return settled


async def _prices(
    store: Store, configured: Mapping[str, AgentConfig], agents: set[str]
) -> dict[str, tuple[float, float]]:
    """Each agent's (input, output) prices per million tokens: configured, else
    registered; left out when neither gives any price."""
    declared = {name: configured[name] for name in agents if name in configured}
    left = agents - declared.keys()
    if left:
        registered = await store.get_many_registrations(left)
        declared |= {name: registration.config for name, registration in registered.items()}
    return {
        name: (config.input_price_per_mtok, config.output_price_per_mtok)
        for name, config in declared.items()
        if config.input_price_per_mtok or config.output_price_per_mtok
    }


async def _judged(store: Store, answered: Sequence[tuple[Item, ServedRequest]]) -> set[int]:
    """The items whose answer's contract the gateway judged already (a stored judgment
    that is not history: an import's own is history, and a repeat of it is the Oracle's
    ordinary duplicate)."""
    events = await asyncio.gather(
        *(store.get_event(answer.agent_id, judgment_key(answer.contract_id))
          for _, answer in answered)
    )  # fmt: skip
    return {
        id(item)
        for (item, _), event in zip(answered, events, strict=True)
        if event is not None and not stored_history(event)
    }
