"""``Budgets``: what each gateway client spent, kept in the store, and its budget enforced.

A client is a ``client`` token with a ``name`` (``api.tokens``); its spend is kept under
that name, per period (``domain/budget.py``: the UTC day, the UTC month and the total,
all three for every named client, whatever its budget's period), at the agents' prices
from the provider's reported usage (``call_cost``: what ``/metrics`` records as the
agent's cost).

A client with a budget holds money before each request is forwarded (``reserve``: an
estimate of its cost, granted by the store atomically against the spend and the other
holds, ``SpendStore.reserve_spend``), and its answer's cost replaces the hold when it is
settled (``bills.py``: written to the store at once); so instances sharing a store hold
one client to one limit, and the spend passes it only by what answers cost beyond what
they held. A hold never settled (its process died) counts until ``reservation_s``.

A client without a budget is charged in memory, and the charges are added to the store
every ``FLUSH_S`` seconds in one write (``SpendStore.add_spend``: an atomic increment per
key); after each write the current periods' values are read back, which is how one
instance sees what the others spent (the ``/metrics`` figures and the quick check
``check`` of every request, before its body is read). A process killed between two
writes loses at most ``FLUSH_S`` of these charges (a clean stop writes them); a store
that is unavailable keeps them for the next write.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from agentladder.config import TokenSettings
from agentladder.domain.budget import (
    PERIODS,
    Period,
    over_budget,
    period_end,
    period_key,
    to_nano,
    to_usd,
)
from agentladder.errors import BudgetExceeded
from agentladder.services.clock import Clock
from agentladder.services.gateway.bills import Bill
from agentladder.services.gateway.flushing import FlushLoop
from agentladder.services.gateway.settings import Budget
from agentladder.store.spend import Hold, SpendKey, SpendStore

__all__ = ["FLUSH_S", "HEADER_PREFIX", "RESERVATION_S", "BudgetState", "Budgets", "ClientSpend"]

log = logging.getLogger(__name__)


FLUSH_S = 1.0
"""Seconds between two writes of the charges made meanwhile (and reads of the others')."""

HEADER_PREFIX = "x-agentladder-budget-"

RESERVATION_S = 900.0
"""Seconds a hold counts when it is never settled (``gateway.reservation_s``)."""


def _usd(value: float) -> str:
    return f"{value:.6f}"


def _moment(when: datetime | None) -> str:
    return "never" if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class BudgetState:
    """A client's budget now: its limit, what it spent in the period, when that resets."""

    client: str
    budget: Budget
    spent_nano: int
    resets_at: datetime | None
    held_nano: int = 0
    """What the client's other requests in flight held (known once this one reserved)."""
    reserved_nano: int | None = None
    """What this request holds (None: not reserved yet)."""

    @property
    def spent_usd(self) -> float:
        """Dollars spent in the period."""
        return to_usd(self.spent_nano)

    @property
    def remaining_usd(self) -> float:
        """Dollars left, less what the requests in flight hold (0 at or over the limit)."""
        return max(0.0, self.budget.limit_usd - to_usd(self.spent_nano + self.held_nano))

    @property
    def over(self) -> bool:
        """Whether the spend reached the limit."""
        return over_budget(self.spent_nano, self.budget.limit_usd)

    def headers(self) -> dict[str, str]:
        """The ``x-agentladder-budget-*`` headers of every answer to this client (with
        ``held`` and ``reserved`` once the request reserved)."""
        found = {
            f"{HEADER_PREFIX}limit": _usd(self.budget.limit_usd),
            f"{HEADER_PREFIX}spent": _usd(self.spent_usd),
            f"{HEADER_PREFIX}remaining": _usd(self.remaining_usd),
            f"{HEADER_PREFIX}period": self.budget.period,
            f"{HEADER_PREFIX}reset": _moment(self.resets_at),
        }
        if self.reserved_nano is not None:
            found[f"{HEADER_PREFIX}held"] = _usd(to_usd(self.held_nano))
            found[f"{HEADER_PREFIX}reserved"] = _usd(to_usd(self.reserved_nano))
        return found


@dataclass(frozen=True, slots=True)
class ClientSpend:
    """A client's spend in the current periods, for ``/metrics`` and the traffic page."""

    client: str
    budget: Budget | None
    spent_usd: dict[Period, float]
    resets_at: datetime | None


class Budgets:
    """Charges in, written in batches; budgets checked against the stored spend."""

    def __init__(
        self, store: SpendStore, tokens: Sequence[TokenSettings], clock: Clock,
        flush_s: float = FLUSH_S, reservation_s: float = RESERVATION_S,
    ) -> None:  # fmt: skip
        self.store = store
        self.clock = clock
        self.flush_s = flush_s
        self.reservation_s = reservation_s
        self.tasks: set[asyncio.Task[None]] = set()
        """The settles and releases under way (``bills.py``), awaited by ``close``."""
        self.clients: dict[str, Budget | None] = {}
        """Every named client token's name, with the budget of the first that has one."""
        for token in tokens:
            named = token.role == "client" and token.name is not None
            if named and self.clients.get(str(token.name)) is None:
                self.clients[str(token.name)] = token.budget
        self._stored: dict[SpendKey, int] = {}
        self._pending: Counter[SpendKey] = Counter()
        self._writing: Counter[SpendKey] = Counter()
        self._lock = asyncio.Lock()
        self._cached: tuple[datetime, datetime, dict[Period, tuple[str, datetime | None]]] | None
        self._cached = None
        self._loop = FlushLoop("writing the gateway clients' spend", self.flush, flush_s, now=True)

    def _periods(self, now: datetime) -> dict[Period, tuple[str, datetime | None]]:
        """Each period's key and end at ``now``, computed once a day (a request asks twice)."""
        cached = self._cached
        if cached is None or not cached[0] <= now < cached[1]:
            ends = {p: period_end(p, now) for p in PERIODS}
            day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
            keys = {p: (period_key(p, now), ends[p]) for p in PERIODS}
            cached = self._cached = (day_start, ends["day"] or now, keys)
        return cached[2]

    def _spent(self, key: SpendKey) -> int:
        return self._stored.get(key, 0) + self._writing[key] + self._pending[key]

    def state(self, token: TokenSettings | None) -> BudgetState | None:
        """The budget of the caller's token now; None without a token, name or budget."""
        if token is None or token.budget is None or token.name is None:
            return None
        key, end = self._periods(self.clock.now())[token.budget.period]
        return BudgetState(token.name, token.budget, self._spent((token.name, key)), end)

    def _refused(self, state: BudgetState, why: str) -> BudgetExceeded:
        """The refusal of a request for ``state`` (``why``: what is left and why not)."""
        if state.resets_at is None:
            retry, when = None, "a total budget does not reset (raise its limit_usd)"
        else:
            seconds = (state.resets_at - self.clock.now()).total_seconds()
            retry = max(1, math.ceil(seconds))
            when = f"it resets at {_moment(state.resets_at)} (in {retry} s)"
        headers = state.headers()
        if retry is not None:
            headers["Retry-After"] = str(retry)
        return BudgetExceeded(f"{why}; {when}", headers, retry)

    def _spent_message(self, state: BudgetState) -> str:
        budget = state.budget
        return (
            f"client {state.client!r} spent ${state.spent_usd:.6f} of its"
            f" ${budget.limit_usd:.6f} budget for the {budget.period}: $0 left"
        )

    def check(self, token: TokenSettings | None) -> BudgetState | None:
        """The caller's budget now; ``BudgetExceeded`` when its spend reached the limit."""
        state = self.state(token)
        if state is None or not state.over:
            return state
        raise self._refused(state, self._spent_message(state))

    async def reserve(
        self, token: TokenSettings | None, want: Callable[[], tuple[int, str]]
    ) -> Bill:
        """The caller's bill for one request; for a client with a budget, money held in
        the store first: ``want()`` is the hold in nano-dollars and what it is for (called
        only then). ``BudgetExceeded`` when the spend reached the limit, or the hold does
        not fit what is left (``domain.budget.refusal``), nothing held."""
        state = self.state(token)
        if state is None:
            return Bill(self, token, None, None)
        nano, what = want()
        now = self.clock.now()
        key, _ = self._periods(now)[state.budget.period]
        hold = Hold(
            uuid.uuid4().hex, (state.client, key), nano, now.timestamp() + self.reservation_s
        )
        found = await self.store.reserve_spend(hold, state.budget.limit_usd, now.timestamp())
        state = BudgetState(
            state.client, state.budget, found.spent, state.resets_at, found.held, nano
        )
        if found.refused == "spent":
            raise self._refused(state, self._spent_message(state))
        if found.refused is not None:
            budget = state.budget
            why = (
                f"client {state.client!r} has ${state.remaining_usd:.6f} left of its"
                f" ${budget.limit_usd:.6f} budget for the {budget.period} (spent"
                f" ${state.spent_usd:.6f}, ${to_usd(found.held):.6f} held by its requests in"
                f" flight): this request would hold ${to_usd(nano):.6f} ({what}), which does"
                " not fit; ask for fewer tokens (max_tokens), or wait"
            )
            raise self._refused(state, why)
        return Bill(self, token, hold, state)

    def charges(self, client: str, nano: int) -> dict[SpendKey, int]:
        """``nano`` charged to each of the client's current periods."""
        return {(client, key): nano for key, _ in self._periods(self.clock.now()).values()}

    def unsettled(self, charges: dict[SpendKey, int]) -> None:
        """Charges a settle could not write: kept for the next batched write."""
        self._pending.update(charges)

    def charge(self, token: TokenSettings | None, usd: float) -> None:
        """An answered request's cost, charged to the caller's current periods."""
        if token is None or token.name is None or token.role != "client":
            return
        nano = to_nano(usd)
        if nano <= 0:
            return
        for key, _ in self._periods(self.clock.now()).values():
            self._pending[token.name, key] += nano

    def spend(self) -> list[ClientSpend]:
        """Every named client's spend in the current periods, by name."""
        now = self.clock.now()
        rows = []
        for client, budget in sorted(self.clients.items()):
            spent = {p: to_usd(self._spent((client, period_key(p, now)))) for p in PERIODS}
            resets = None if budget is None else period_end(budget.period, now)
            rows.append(ClientSpend(client, budget, spent, resets))
        return rows

    async def refresh(self) -> None:
        """Read the current periods' stored spend of every named client."""
        if not self.clients:
            return
        now = self.clock.now()
        keys = [(client, period_key(p, now)) for client in self.clients for p in PERIODS]
        found = await self.store.get_spend(keys)
        self._stored = {key: found.get(key, 0) for key in keys}

    async def flush(self) -> None:
        """Add the charges kept so far to the store (kept again when the write fails),
        then read the current spend back."""
        async with self._lock:
            batch, self._pending = self._pending, Counter()
            if batch:
                self._writing = batch
                try:
                    await self.store.add_spend(dict(batch))
                except BaseException:
                    self._pending.update(batch)  # the next flush tries again
                    raise
                finally:
                    self._writing = Counter()
                for key, nano in batch.items():  # stored now, until read back
                    self._stored[key] = self._stored.get(key, 0) + nano
            await self.refresh()

    def start(self) -> None:
        """Flush now, then every ``flush_s`` seconds, in the background."""
        if self.clients:
            self._loop.start()

    async def close(self) -> None:
        """Let the settles and releases under way end, stop the loop (a write under way
        ends first) and write what is left."""
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        await self._loop.close()
