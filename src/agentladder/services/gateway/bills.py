"""``Bill``: what one gateway request is charged, settled exactly once whatever its end.

A request's bill is made before its first attempt (``Budgets.reserve``). For a client
with a budget it carries the money held for the request in the store (``Hold``); the
first ``settle`` (the answer's cost, from ``Gateway._record``) writes the cost and drops
the hold in one store operation (``SpendStore.settle_spend``), at once, in a task that
``close`` awaits; a later ``settle`` is ignored. ``close`` without a settle (every agent
failed or refused the request, or an error came first) releases the hold. When the
settle's write fails, its charges go to the batched writes (``Budgets.unsettled``) and
the hold counts until it expires. For a client without a budget, ``settle`` is the
batched charge of before (``Budgets.charge``) and ``close`` does nothing.

``billed`` wraps a stream: at its end, whatever it is (whole, broken, its caller gone),
the bill is settled at the cost of what was relayed, unless the stream's own record
settled it first, then closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import Any, Protocol

from agentladder.config import TokenSettings
from agentladder.domain.agents import AgentConfig
from agentladder.domain.budget import output_tokens, reservation_nano, to_nano
from agentladder.store.spend import Hold, SpendKey, SpendStore

__all__ = ["Bill", "Figures", "Ledger", "billed", "holding"]

log = logging.getLogger(__name__)


class Figures(Protocol):
    """A budget as a reservation found it (``BudgetState`` is one)."""

    def headers(self) -> dict[str, str]:
        """Its ``x-agentladder-budget-*`` headers."""


class Ledger(Protocol):
    """What a bill needs of the budgets (``Budgets`` is one)."""

    store: SpendStore
    tasks: set[asyncio.Task[None]]

    def charge(self, token: TokenSettings | None, usd: float) -> None:
        """A batched charge (a client without a budget)."""

    def charges(self, client: str, nano: int) -> dict[SpendKey, int]:
        """``nano`` on each of the client's current periods."""

    def unsettled(self, charges: dict[SpendKey, int]) -> None:
        """Charges a settle could not write."""


class Bill:
    """One request's charge: to whom, the money held for it, settled once; see the module."""

    def __init__(
        self, ledger: Ledger, token: TokenSettings | None, hold: Hold | None,
        state: Figures | None,
    ) -> None:  # fmt: skip
        self.ledger = ledger
        self.token = token
        self.hold = hold
        self.state = state
        """The budget as the reservation found it (its headers go with the answer)."""
        self.done = False
        """Whether it was settled or released (nothing more happens then)."""
        self._task: asyncio.Task[None] | None = None

    def headers(self) -> dict[str, str]:
        """The budget's headers as the reservation found it (none without a budget)."""
        return {} if self.state is None else self.state.headers()

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.ledger.tasks.add(task)
        task.add_done_callback(self.ledger.tasks.discard)
        self._task = task

    def settle(self, usd: float) -> None:
        """The request's cost, once: the first call counts, later ones are ignored."""
        if self.done:
            return
        self.done = True
        if self.hold is None:
            self.ledger.charge(self.token, usd)
            return
        self._start(self._settle(self.hold, self.ledger.charges(self.hold.key[0], to_nano(usd))))

    async def _settle(self, hold: Hold, charges: dict[SpendKey, int]) -> None:
        try:
            await self.ledger.store.settle_spend(hold, charges)
        except Exception as error:
            log.warning(
                "settling a request of %r failed (charged in the next write, its hold"
                " counts until it expires): %s", hold.key[0], error,
            )  # fmt: skip
            self.ledger.unsettled(charges)

    async def _release(self, hold: Hold) -> None:
        try:
            await self.ledger.store.release_spend(hold)
        except Exception as error:
            log.warning("releasing a hold of %r failed (it expires): %s", hold.key[0], error)

    async def close(self) -> None:
        """Release the hold when nothing settled it; wait for the settle's or release's
        write (it goes on when the waiting task is cancelled)."""
        if not self.done:
            self.done = True
            if self.hold is not None:
                self._start(self._release(self.hold))
        if self._task is not None:
            await asyncio.shield(self._task)


async def billed(
    stream: AsyncIterator[bytes], bill: Bill, relayed: Callable[[], float]
) -> AsyncIterator[bytes]:
    """``stream`` passed on; at its end (whole, broken, or its caller gone) the bill is
    settled at ``relayed()`` (the cost of what went out) unless already settled, then
    closed."""
    try:
        async for chunk in stream:
            yield chunk
    finally:
        try:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                await closing()  # the stream's own end (and record) first
        finally:
            bill.settle(relayed())
            await bill.close()


def holding(
    agents: Sequence[AgentConfig], body: Mapping[str, object], prompt: int, default: int
) -> tuple[int, str]:
    """What a request holds (nano-dollars) and what for: its prompt's estimated tokens and
    its output tokens (``output_tokens``: its max_tokens, else ``default``) at the prices
    of the costliest of the agents it may go to (a fallback may answer it)."""
    out = output_tokens(body, default)
    costs = {
        agent.name: reservation_nano(
            prompt, out, agent.input_price_per_mtok, agent.output_price_per_mtok
        )
        for agent in agents
    }
    name = max(costs, key=lambda found: costs[found]) if costs else ""
    return costs.get(name, 0), f"{prompt} prompt and {out} output tokens at {name}'s prices"
