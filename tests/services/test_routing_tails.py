"""The projection's upper-tail order keeps its keys and its arrays of skills and sds in
step through any adds and removes, and hands a routing the tails ``routing_table`` gives."""

from __future__ import annotations

import random

import numpy as np

from agentladder.domain.routing.table import Candidate, routing_table
from agentladder.services.routing.tails import TailOrder

TAIL = 4.0


def _candidate(name: str, rng: random.Random, share: float = 1.0) -> Candidate:
    skill, sd = rng.choice([5.0, 6.5, rng.uniform(0, 10)]), rng.choice([1.0, rng.uniform(0.1, 3)])
    return Candidate(agent_id=name, skill=skill * share, sd=sd * share, low=0.0,
                     observations=1, cost=0.01, share=share)  # fmt: skip


def _key(c: Candidate) -> tuple[float, str]:
    return (-(c.skill + TAIL * c.sd), c.agent_id)


def test_keys_and_arrays_stay_in_step_and_match_the_full_read() -> None:
    """500 random adds, moves and removes over 60 agents (ties on purpose), then a few
    agents degraded at the call: every index holds the same agent, skill and sd as the
    full read's tails over the same candidates."""
    rng = random.Random(11)
    live: dict[str, Candidate] = {}
    order = TailOrder()
    for _ in range(500):
        name = f"a{rng.randrange(60):02d}"
        old = live.pop(name, None)
        if old is not None:
            order.remove(_key(old))
        if rng.random() < 0.8:
            new = _candidate(name, rng)
            live[name] = new
            order.add(_key(new), new)
        assert len(order.keys) == len(order.skills) == len(order.sds) == len(live)
    degraded = dict.fromkeys(rng.sample(sorted(live), 5), 0.5)
    moved = sorted(
        (Candidate(agent_id=n, skill=live[n].skill * s, sd=live[n].sd * s, low=0.0,
                   observations=1, cost=0.01, share=s) for n, s in degraded.items()),
        key=lambda c: c.agent_id,
    )  # fmt: skip
    tails = order.tails(lambda key: live[key[-1]], [_key(live[n]) for n in degraded], moved)
    every = [c for n, c in live.items() if n not in degraded] + moved
    full = routing_table(every, TAIL).tails
    assert [tails.at(i).agent_id for i in range(len(tails))] == [
        full.at(i).agent_id for i in range(len(full))
    ]
    assert np.array_equal(tails.skills, full.skills)
    assert np.array_equal(tails.sds, full.sds)
    assert len(tails) == len(live)
