"""The body of ``GET /agents``, built from one cached JSON fragment per agent.

A fragment is reused while the agent's registration (the same decoded object: the
stores decode a registration again only when its stored text changed), its status and
its stats revision are unchanged; otherwise it is built and encoded again. A listing of
1,000 unchanged agents is then a read of both tables and a join of bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentladder.api.schemas import agent_out
from agentladder.domain.registry import AgentStatus
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.services.registry import AgentView
from agentladder.store.records import Registration, Versioned

__all__ = ["AgentListing"]


@dataclass(frozen=True, slots=True)
class _Fragment:
    registration: Registration
    status: AgentStatus
    revision: int
    data: bytes


class AgentListing:
    """``{"agents": [...]}`` as bytes, one cached fragment per agent."""

    def __init__(self) -> None:
        self._fragments: dict[str, _Fragment] = {}

    def fragment(self, view: AgentView, stats: Versioned[AgentPerformanceStats] | None) -> bytes:
        """One agent's JSON object, reused while nothing it shows changed."""
        revision = -1 if stats is None else stats.revision
        known = self._fragments.get(view.agent_id)
        if (
            known is not None
            and known.status is view.status
            and known.revision == revision
            and (known.registration is view.registration or known.registration == view.registration)
        ):
            return known.data
        data = agent_out(view, None if stats is None else stats.value).model_dump_json().encode()
        self._fragments[view.agent_id] = _Fragment(view.registration, view.status, revision, data)
        return data

    def body(
        self,
        views: Sequence[AgentView],
        stats: Mapping[str, Versioned[AgentPerformanceStats]],
        *,
        everyone: bool = True,
    ) -> bytes:
        """The response body, in the order of ``views``. With ``everyone`` (the views are
        every registered agent) the fragments of agents no longer registered are dropped."""
        if everyone:
            listed = {view.agent_id for view in views}
            for gone in [agent for agent in self._fragments if agent not in listed]:
                del self._fragments[gone]
        parts = [self.fragment(view, stats.get(view.agent_id)) for view in views]
        return b'{"agents":[' + b",".join(parts) + b"]}"
