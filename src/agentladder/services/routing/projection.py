"""The routing projection: per task type, every candidate with its skill summary, level,
rank, price and latency window, kept sorted in each strategy's order, so that a routing
reads only as far down the orders as its picks and the agents it lists (docs/routing.md,
"The projection").

- **What is kept**: each agent's ``Facts`` (``candidates.py``), the fleet's skill state,
  and per task type routed so far its ``Candidate`` (skill, sd and lower bound as of the
  projection's moment ``at``) with three sorted lists of keys (by lower bound, by cost,
  by upper tail).
- **When it is updated**: a write through this instance's ``WatchedStore`` marks the
  agents it touched; the next routing reads those agents again (four reads of a few
  keys) and moves them in the orders (``bisect``). A skill fit marks everything: the next
  routing loads the whole fleet again before it answers. A fit another process committed
  (an import's, ``agentladder skill rebuild``, another instance's) is seen the same way:
  on a store that reports other instances' writes (NATS, ``follows``) when its message
  arrives, on the others (SQLite) by each routing reading the fleet's fit record first
  (one row, decoded only when its text changed) and loading the whole fleet again when
  it is not the one loaded. Every ``refresh_s`` seconds
  the whole fleet is loaded again in the background (estimates widen with time; another
  instance's writes on a shared store), the current orders serving meanwhile.
- **At the call**: whether an agent is online (its last heartbeat), reachable, down or
  degraded (``HealthMonitor``: only the agents whose calls failed lately) is decided
  when the call reads it; a degraded agent is taken out of the orders and merged back
  at the place of its skill times its share (``orders.Merged``).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace

from agentladder.domain.registry import AgentStatus, agent_status
from agentladder.domain.routing.health import HealthStatus
from agentladder.domain.routing.select import Candidate, RoutingTable
from agentladder.domain.rules import OracleRules
from agentladder.domain.skill.state import FleetSkill
from agentladder.services.agents.registry import Registry
from agentladder.services.routing.candidates import Facts, Maker, facts_of, with_registration
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.orders import Key, Merged
from agentladder.services.routing.tails import TailOrder
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.records import Registration
from agentladder.store.watched import Changes

__all__ = ["RoutingProjection"]

log = logging.getLogger(__name__)

_CHUNK = 512  # candidates made between two yields to the event loop (background loads)


@dataclass(slots=True)
class _Orders:
    """One task type's candidates and their keys in each strategy's order."""

    candidates: dict[str, Candidate] = field(default_factory=dict)
    by_low: list[Key] = field(default_factory=list)
    by_cost: list[Key] = field(default_factory=list)
    by_upper: TailOrder = field(default_factory=TailOrder)


@dataclass(slots=True)
class _State:
    """Everything the projection holds, as of one load (and the updates since)."""

    maker: Maker
    facts: dict[str, Facts]
    types: dict[str | None, _Orders] = field(default_factory=dict)


def _keys(c: Candidate, tail: float) -> tuple[Key, Key, Key]:
    """The candidate's keys by lower bound, by cost and by upper tail (``routing_table``'s
    orders, ties by agent id)."""
    return (
        (-c.low, c.agent_id),
        (c.cost, -c.low, c.agent_id),
        (-(c.skill + tail * c.sd), c.agent_id),
    )


def _first(pair: tuple[Key, object]) -> Key:
    return pair[0]


def _remove(order: list[Key], key: Key) -> None:
    at = bisect.bisect_left(order, key)
    if at < len(order) and order[at] == key:
        del order[at]


class RoutingProjection:
    """The candidates of every task type routed so far, kept current (module docstring)."""

    def __init__(
        self, *, store: Store, registry: Registry, skill: SkillService, changes: Changes,
        oracle_rules: OracleRules, tail_sd: float, refresh_s: float, follows: bool = False,
    ) -> None:  # fmt: skip
        self.store = store
        self.follows = follows  # the store reports other instances' writes (no fit check)
        self.registry = registry
        self.skill = skill
        self.oracle_rules = oracle_rules
        self.tail_sd = tail_sd
        self.refresh_s = refresh_s
        self._state: _State | None = None
        self._dirty: set[str] = set()
        self._reading: set[str] = set()  # the marked agents being read again now
        self._during: list[set[str]] = []  # marks seen while a load reads the store
        self._epoch = 0  # fits seen (a load older than the last is stale)
        self._loaded_epoch = -1
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Task[None] | None = None
        self.loads = 0  # whole-fleet loads, for tests and benchmarks
        changes.listen(self._touched, self._everything, self._registered)

    def _touched(self, ids: Collection[str]) -> None:
        self._dirty.update(ids)
        for marks in self._during:
            marks.update(ids)

    def _registered(self, registration: Registration) -> None:
        """A registration this instance stored: a heartbeat of a known agent with the same
        declaration changes only its last heartbeat (read at the call), a new declaration
        its cost and tags: put in place here, with no read. Any other agent is read."""
        agent = registration.agent_id
        for marks in self._during:  # a load in flight may have read the one before
            marks.add(agent)
        state = self._state
        old = None if state is None else state.facts.get(agent)
        if (
            state is None or old is None or old.last_seen is None
            or agent in self._dirty or agent in self._reading
        ):  # fmt: skip
            self._touched((agent,))
            return
        if registration.last_seen < old.last_seen:
            return  # an older heartbeat stored after a newer one returned: kept the newer
        new = with_registration(old, registration)
        state.facts[agent] = new
        if (new.cost, new.tags) != (old.cost, old.tags):
            self._move(state, agent, new)

    def _everything(self) -> None:
        self._epoch += 1

    def invalidate(self) -> None:
        """The next routing loads the whole fleet again (as after a skill fit)."""
        self._epoch += 1

    async def close(self) -> None:
        """Stop a background load in flight."""
        if self._refresh is not None:
            self._refresh.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresh

    async def _load(
        self, task_types: Iterable[str | None], marks: set[str], background: bool
    ) -> _State:
        """The whole fleet read from the store, with the orders of ``task_types``. The
        agents marked from the start are gathered in ``marks`` (``_swap``)."""
        self._during.append(marks)
        try:
            at = self.skill.now()
            # the fleet first: a fit committed while the rest is read leaves the fleet's
            # fit record older than the store's, which the next routing sees (``_current``)
            fleet = await self.store.get_fleet_skill()
            registrations = await self.store.list_registrations()
            skills = {s.agent_id: s for s in await self.store.list_skills()}
            ids = [r.agent_id for r in registrations]
            known = set(ids)
            ids += sorted(agent for agent in skills if agent not in known)
            # one after the other: at 10,000 agents on NATS, gathered, the fleet's one get
            # waited behind 20,000 and timed out
            stats = await self.store.get_many_stats(ids)
            profiles = await self.store.get_many_profiles(ids)
        except BaseException:
            self._during.remove(marks)
            raise
        by_id = {r.agent_id: r for r in registrations}
        facts: dict[str, Facts] = {}
        for agent in ids:
            found = facts_of(
                by_id.get(agent), skills.get(agent), stats.get(agent), profiles.get(agent)
            )
            if found is not None:
                facts[agent] = found
        state = _State(self._maker(fleet, at), facts)
        try:
            for task_type in task_types:
                state.types[task_type] = await self._build(state, task_type, background)
        except BaseException:
            self._during.remove(marks)
            raise
        self.loads += 1
        return state

    def _swap(self, state: _State | None, epoch: int, marks: set[str]) -> None:
        """Put a load in place (None: drop it); under the lock. The agents marked since
        it began are read again at the next call: the load may have read them before."""
        self._during.remove(marks)
        self._dirty |= marks
        if state is not None:
            self._state, self._loaded_epoch = state, epoch

    def _maker(self, fleet: FleetSkill, at: float) -> Maker:
        return Maker(fleet, at, self.skill.rules, self.oracle_rules)

    async def _build(self, state: _State, task_type: str | None, background: bool) -> _Orders:
        orders = _Orders()
        lows, costs, uppers = [], [], []
        tail = self.tail_sd
        for index, (agent, facts) in enumerate(state.facts.items()):
            c = state.maker.candidate(agent, facts, task_type)
            orders.candidates[agent] = c
            low, cost, upper = _keys(c, tail)
            lows.append(low)
            costs.append(cost)
            uppers.append((upper, c))
            if background and index % _CHUNK == _CHUNK - 1:
                await asyncio.sleep(0)
        orders.by_low, orders.by_cost = sorted(lows), sorted(costs)
        orders.by_upper = TailOrder(uppers)
        return orders

    async def _apply(self, state: _State) -> None:
        """Read the marked agents again and move them in every order kept."""
        ids = sorted(self._dirty)
        self._dirty.clear()
        self._reading = set(ids)  # a heartbeat stored meanwhile: read it again after
        try:
            registrations, skills, stats, profiles = await asyncio.gather(
                self.store.get_many_registrations(ids),
                self.store.get_skills(ids),
                self.store.get_many_stats(ids),
                self.store.get_many_profiles(ids),
            )
        except BaseException:
            self._dirty.update(ids)  # still to be read
            raise
        finally:
            self._reading = set()
        for agent in ids:
            found = facts_of(
                registrations.get(agent), skills.get(agent), stats.get(agent), profiles.get(agent)
            )
            if found is None:
                state.facts.pop(agent, None)
            else:
                state.facts[agent] = found
            self._move(state, agent, found)

    def _move(self, state: _State, agent: str, found: Facts | None) -> None:
        """Make the agent's candidate again at every task type kept, in its places."""
        tail = self.tail_sd
        for task_type, orders in state.types.items():
            old = orders.candidates.pop(agent, None)
            lists = (orders.by_low, orders.by_cost)
            if old is not None:
                *keys, upper = _keys(old, tail)
                for order, key in zip(lists, keys, strict=True):
                    _remove(order, key)
                orders.by_upper.remove(upper)
            if found is not None:
                c = state.maker.candidate(agent, found, task_type)
                orders.candidates[agent] = c
                *keys, upper = _keys(c, tail)
                for order, key in zip(lists, keys, strict=True):
                    bisect.insort(order, key)
                orders.by_upper.add(upper, c)

    async def _current(self, task_type: str | None) -> _State:
        """The state, current with every write this instance has made, with the orders
        of ``task_type``."""
        async with self._lock:
            state = self._state
            if state is not None and self._loaded_epoch == self._epoch and not self.follows:
                stored = (await self.store.get_fleet_skill()).fit
                if stored != state.maker.fleet.fit:  # another process's fit
                    self._epoch += 1
            if state is None or self._loaded_epoch != self._epoch:
                kept: list[str | None] = [] if state is None else list(state.types)
                epoch, marks = self._epoch, set[str]()
                state = await self._load(kept, marks, background=False)
                self._swap(state, epoch, marks)
            if self._dirty:
                await self._apply(state)
            if task_type not in state.types:
                state.types[task_type] = await self._build(state, task_type, background=False)
        if self._refresh is None and self.skill.now() - state.maker.at >= self.refresh_s:
            self._refresh = asyncio.ensure_future(self._refreshed())
        return state

    async def _refreshed(self) -> None:
        """Load the whole fleet again in the background and put it in place."""
        try:
            kept = [] if self._state is None else list(self._state.types)
            epoch, marks = self._epoch, set[str]()
            state = await self._load(kept, marks, background=True)
            async with self._lock:
                newer = self._state is not None and epoch < self._loaded_epoch
                self._swap(None if newer else state, epoch, marks)
        except asyncio.CancelledError:
            raise
        except Exception:  # the current orders keep serving; the next call tries again
            log.exception("refreshing the routing projection failed")
        finally:
            self._refresh = None

    async def moment(self) -> float:
        """The moment the skill estimates are shown as of (the last whole load's), once
        the projection is current with this instance's writes."""
        return (await self._current(None)).maker.at

    async def refreshed(self) -> None:
        """Wait for the background load in flight, if any, to be in place."""
        if self._refresh is not None:
            await asyncio.shield(self._refresh)

    async def table(
        self,
        task_type: str | None,
        reachable: Collection[str] | None,
        *,
        online_only: bool,
        health: HealthMonitor | None,
    ) -> RoutingTable:
        """``RoutingService.table``'s answer, from the projection. The table reads the
        projection as it is: use it before the next await (``route`` does)."""
        state = await self._current(task_type)
        orders = state.types[task_type]
        facts, candidates = state.facts, orders.candidates
        now = self.registry.clock.now().timestamp()
        interval = self.registry.interval

        def online(c: Candidate) -> bool:
            seen = facts[c.agent_id].last_seen
            if seen is not None and agent_status(seen, now, interval) is AgentStatus.ONLINE:
                return True
            return not online_only and c.observations > 0

        downs, shares = _health(health, candidates)

        def at_call(c: Candidate) -> Candidate:
            up = online(c)
            near = reachable is None or c.agent_id in reachable
            down = downs.get(c.agent_id)
            if up and near and down is None:
                return c
            return replace(c, online=up, reachable=near, down=down)

        moved: list[Candidate] = []
        for agent, share in shares.items():
            c = at_call(candidates[agent])
            moved.append(
                replace(c, skill=c.skill * share, sd=c.sd * share, low=c.low * share, share=share)
            )
        tail = self.tail_sd
        keyed = [(_keys(c, tail), c) for c in moved]
        out = set(shares)

        def item(key: Key) -> Candidate:
            return at_call(candidates[key[-1]])

        ones = [sorted(((k[n], c) for k, c in keyed), key=_first) for n in (0, 1)]
        gone = [_keys(candidates[agent], tail)[2] for agent in sorted(out)]
        return RoutingTable(
            by_low=Merged(orders.by_low, item, out, ones[0], len(out)),
            by_cost=Merged(orders.by_cost, item, out, ones[1], len(out)),
            tails=orders.by_upper.tails(item, gone, sorted(moved, key=lambda c: c.agent_id)),
            tail_sd=tail,
        )


def _health(
    health: HealthMonitor | None, candidates: dict[str, Candidate]
) -> tuple[dict[str, str], dict[str, float]]:
    """The candidates down now with why, and those degraded with the share of calls they
    answer (below 1): of the agents whose calls failed lately only."""
    downs: dict[str, str] = {}
    shares: dict[str, float] = {}
    if health is None:
        return downs, shares
    for agent in health.suspects():
        if agent not in candidates:
            continue
        found = health.health(agent)
        if found.status is HealthStatus.DOWN:
            downs[agent] = found.reason
            continue
        share = health.share(agent)
        if share != 1.0:
            shares[agent] = share
    return downs, shares
