"""The registry: agents declare themselves by heartbeat; the server keeps when it heard them.

The fields flow as the ranking specification draws them: AgentConfig (the YAML) →
AgentHeartbeat (every ``heartbeat_interval_s``, 10 s by default) → AgentRegistration
(here, persisted). A heartbeat carrying a server-owned field (rank, stats, XP, level...) is
refused, logged as an attempt to self-promote and counted; so is an agent heartbeating as
another. Agents the server can ask itself (configured with a backend and not ``remote``)
are heartbeated by the server (``beat_local``).

For an agent defined in the config, the config is the authority for its declaration: a
heartbeat carrying a field with another value is refused (``DeclarationMismatch``) and
counted as ``declaration_mismatch``; one that agrees records the config's declaration
(fields it leaves out are not wiped) and the config's mode (``remote`` unless the server
hosts it). For an agent not in the config, each heartbeat is its whole declaration: it
replaces the stored one, and a field it leaves out returns to its default.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from agentladder.config import AgentSettings
from agentladder.domain.agents import AgentConfig
from agentladder.domain.registry import (
    AgentStatus,
    DeclarationMismatch,
    SelfPromotion,
    agent_status,
    check_heartbeat_fields,
    contradicted_fields,
    online_window_s,
)
from agentladder.errors import InvalidInput, NotFound, Refused
from agentladder.services.clock import Clock, SystemClock
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.evidence import model_change
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.records import DirectoryQuery, Registration

__all__ = ["AgentView", "Registry"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AgentView:
    """A registration as shown: the declaration, cost per round, status and times.

    A plain dataclass: both parts are validated already, and listings build thousands.
    """

    registration: Registration
    status: AgentStatus

    @property
    def agent_id(self) -> str:
        """The agent's name."""
        return self.registration.agent_id


def _declaration(agent: AgentSettings) -> AgentConfig:
    """A configured agent's declaration (its settings without how it is reached)."""
    return AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))


class Registry:
    """Heartbeats in, registrations and online status out."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        heartbeat_interval_s: float = 10.0,
        configured: Iterable[AgentSettings] = (),
        skill: SkillService | None = None,
        oracle: Oracle | None = None,
    ) -> None:
        self.store = store
        self.skill = skill
        self.oracle = oracle
        self.clock = clock or SystemClock()
        self.interval = heartbeat_interval_s
        self.configured = {agent.name: agent for agent in configured}
        self.refusals: Counter[str] = Counter()  # reason -> count, for /metrics

    def _now(self) -> float:
        return self.clock.now().timestamp()

    async def heartbeat(
        self, payload: Mapping[str, object], *, as_agent: str | None = None
    ) -> AgentView:
        """Record a heartbeat; ``as_agent`` is the agent the caller authenticated as."""
        try:
            check_heartbeat_fields(payload)
        except SelfPromotion as refused:
            self.refusals["self_promotion"] += 1
            log.warning("refused heartbeat: %s", refused)
            raise
        try:
            config = AgentConfig.model_validate(payload)
        except ValidationError as error:
            detail = error.errors()[0]
            field = ".".join(str(p) for p in detail["loc"]) or "heartbeat"
            reason = str(detail["msg"]).removeprefix("Value error, ")
            raise InvalidInput(field, detail.get("input"), reason) from None
        if as_agent is not None and as_agent != config.name:
            self.refusals["impersonation"] += 1
            log.warning("refused heartbeat: %r heartbeating as %r", as_agent, config.name)
            raise Refused(f"agent {as_agent!r} may not heartbeat as {config.name!r}")
        configured = self.configured.get(config.name)
        if configured is None:
            return await self._record(config, remote=True)
        declared = _declaration(configured)
        carried = config.model_dump(include=config.model_fields_set)
        differing = contradicted_fields(declared.model_dump(), carried)
        if differing:
            self.refusals["declaration_mismatch"] += 1
            log.warning(
                "refused heartbeat of %r: %s differ from the config", config.name, differing
            )
            raise DeclarationMismatch(config.name, differing)
        hosted = configured.backend is not None and not configured.remote
        return await self._record(declared, remote=not hosted)

    async def _record(self, config: AgentConfig, *, remote: bool) -> AgentView:
        now = self._now()
        previous = await self.store.get_registration(config.name)
        if previous is not None and (previous.config.model_name, previous.config.provider_id) != (
            config.model_name,
            config.provider_id,
        ):  # a new model is a new agent in all but name: before the registration, so that
            # a failure here fails the heartbeat and its retry finds the change again
            change = model_change(
                config.name, previous.last_seen, config.model_name, config.provider_id, now
            )
            if self.skill is not None:
                await self.skill.observe(change)
            if self.oracle is not None:  # probation in every task type (domain/probation)
                await self.oracle.model_changed(
                    config.name, change.key, config.model_name, config.provider_id
                )
        registration = Registration(
            config=config,
            first_seen=now if previous is None else previous.first_seen,
            last_seen=now,
            remote=remote,
        )
        await self.store.put_registration(registration)
        return AgentView(registration=registration, status=AgentStatus.ONLINE)

    async def beat_local(self) -> list[AgentView]:
        """Heartbeat for every configured agent the server asks itself (not remote)."""
        views = []
        for agent in self.configured.values():
            if agent.backend is not None and not agent.remote:
                views.append(await self._record(_declaration(agent), remote=False))
        return views

    def _view(self, registration: Registration, now: float | None = None) -> AgentView:
        now = self._now() if now is None else now
        status = agent_status(registration.last_seen, now, self.interval)
        return AgentView(registration, status)

    async def get(self, agent_id: str) -> AgentView:
        """One agent's registration and status; ``NotFound`` if it never heartbeated."""
        found = await self.store.get_registration(agent_id)
        if found is None:
            raise NotFound("agent", agent_id)
        return self._view(found)

    async def list(self, *, tag: str | None = None, provider: str | None = None) -> list[AgentView]:
        """Every registered agent, by name (those with capability ``tag`` and of
        ``provider`` when given: filtered by the store)."""
        now = self._now()  # one clock reading for the whole listing
        found = await self.store.list_registrations(tag=tag, provider=provider)
        return [self._view(r, now) for r in found]

    async def listing_json(self) -> bytes:
        """``GET /agents``'s body: every registered agent with its status and stats, read
        from the store's current state (``Store.agent_listing_json``)."""
        return await self.store.agent_listing_json(self._now(), online_window_s(self.interval))

    async def directory_json(self, query: DirectoryQuery) -> bytes:
        """``GET /agents/directory``'s body: the agents ``query`` selects, with their status
        and stats, in its order and page (``Store.agent_directory_json``)."""
        return await self.store.agent_directory_json(
            self._now(), online_window_s(self.interval), query
        )

    async def online(self) -> dict[str, bool]:
        """Every registered agent and whether it is online."""
        return {v.agent_id: v.status is AgentStatus.ONLINE for v in await self.list()}

    async def online_among(self, agent_ids: Collection[str]) -> dict[str, bool]:
        """Those of ``agent_ids`` that are registered and whether each is online (what
        ``online`` says of them, without reading every other registration)."""
        now = self._now()
        found = await self.store.get_many_registrations(agent_ids)
        return {
            agent: self._view(registration, now).status is AgentStatus.ONLINE
            for agent, registration in found.items()
        }
