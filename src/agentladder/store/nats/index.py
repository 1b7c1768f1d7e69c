"""The leaderboard index of the NATS store: sorted in memory, fed by the Oracle stream.

An ephemeral ordered consumer on ``<prefix>.oracle.event.>`` delivers the last event
message of every agent (deliver policy last-per-subject), then every new one live. Each
message replaces the agent's profile and moves it in the sorted orders, overall and per
task type (``bisect``, ordering and rows as in ``store/leaderboard.py``). A query is
served from memory after waiting, bounded, until the index has applied everything up to
a given stream sequence (read-your-writes). The rows of each order's top are built once
and kept until a message moves an agent in that order (boards are read far more often
than any one task type's order changes). A message that cannot be decoded is logged
and skipped; the index keeps running.

The index also keeps each agent's last event message as received (stream sequence and
raw bytes): the Oracle folds a judgment from it instead of reading the head from the
server. A head the index has not caught up with is refused by the publish's
compare-and-set, and the retry reads the stored head.

Per agent the index holds only tuples of strings and numbers (sort keys, the figures of
its rows, the head), never the decoded profile: the garbage collector stops walking
tuples like these, so a full collection costs about the same with 10,000 agents as with
none (with decoded profiles, some 30 objects each, it took 300 ms and more).
"""

from __future__ import annotations

import bisect
import logging

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from agentladder.domain.profile import AgentProfile
from agentladder.errors import CorruptRecord, StoreUnavailable
from agentladder.store.codec import decode
from agentladder.store.leaderboard import RowFacts, row_facts, row_from_facts, sort_key
from agentladder.store.nats.follower import Follower
from agentladder.store.records import LeaderboardRow, OracleCommit

__all__ = ["LeaderboardIndex"]

log = logging.getLogger(__name__)

_Key = tuple[int, float, str, str]  # sort_key(profile, task_type) + (agent id,)


class LeaderboardIndex:
    """Every agent's latest profile, kept sorted overall and per task type."""

    def __init__(self, js: JetStreamContext, stream: str, event_prefix: str) -> None:
        self._js = js
        self._stream = stream
        self._prefix = event_prefix
        self._facts: dict[str, RowFacts] = {}
        self._heads: dict[str, tuple[int, bytes]] = {}  # agent -> its last event message
        self._undecoded: set[str] = set()  # agents whose last event message was not decoded
        self._keys: dict[str, tuple[tuple[str | None, _Key], ...]] = {}
        self._orders: dict[str | None, list[_Key]] = {None: []}
        self._tops: dict[str | None, list[LeaderboardRow]] = {}  # built rows, by order
        self._follower = Follower(js, stream, f"{event_prefix}>", self._on_message)

    @property
    def applied(self) -> int:
        """The stream sequence of the last event message applied (0: none yet)."""
        return self._follower.applied

    async def start(self) -> None:
        """Subscribe: the current profiles first, then live updates."""
        await self._follower.start()

    async def stop(self) -> None:
        """Unsubscribe; the index no longer changes."""
        await self._follower.stop()

    def _on_message(self, seq: int, msg: Msg) -> None:
        agent_id = msg.subject.removeprefix(self._prefix)
        try:
            record = decode(OracleCommit, msg.data, msg.subject)
        except CorruptRecord as error:
            log.warning("leaderboard index skips stream sequence %d: %s", seq, error)
            self._heads.pop(agent_id, None)  # not an older head: readers read the stored one
            self._undecoded.add(agent_id)
        else:
            self._apply(agent_id, record.profile)
            self._heads[agent_id] = (seq, msg.data)
            self._undecoded.discard(agent_id)

    def _apply(self, agent_id: str, profile: AgentProfile) -> None:
        for task_type, key in self._keys.pop(agent_id, ()):
            order = self._orders[task_type]
            del order[bisect.bisect_left(order, key)]
            self._tops.pop(task_type, None)
        keys = []
        for task_type in (None, *profile.specializations):
            key = (*sort_key(profile, task_type), agent_id)
            bisect.insort(self._orders.setdefault(task_type, []), key)
            self._tops.pop(task_type, None)
            keys.append((task_type, key))
        self._keys[agent_id] = tuple(keys)
        self._facts[agent_id] = row_facts(profile)

    def head(self, agent_id: str) -> tuple[int, bytes] | None:
        """The stream sequence and bytes of the agent's last event message applied here."""
        return self._heads.get(agent_id)

    def undecoded(self, agent_id: str) -> bool:
        """Whether the agent's last event message applied here could not be decoded (it
        has no head here, yet has events)."""
        return agent_id in self._undecoded

    async def wait_for(self, seq: int, timeout: float) -> None:
        """Return once every event message up to ``seq`` is applied; else StoreUnavailable."""
        if await self._follower.reached(seq, timeout):
            return
        if not self._follower.running:
            raise StoreUnavailable("the leaderboard index is stopped")
        raise StoreUnavailable(
            f"leaderboard index at stream sequence {self.applied}, not {seq} after {timeout} s"
        )

    def task_types(self) -> frozenset[str]:
        """The task types some agent's profile has a specialization in."""
        return frozenset(t for t, order in self._orders.items() if t is not None and order)

    def rows(self, task_type: str | None, limit: int) -> list[LeaderboardRow]:
        """The top ``limit`` rows, overall (None) or for one task type."""
        order = self._orders.get(task_type, [])
        top = self._tops.get(task_type, [])
        if len(top) < min(limit, len(order)):
            top = [
                row_from_facts(position, key[3], self._facts[key[3]], task_type)
                for position, key in enumerate(order[:limit], start=1)
            ]
            self._tops[task_type] = top
        return top[:limit]
