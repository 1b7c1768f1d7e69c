"""Two `agentladder serve` instances on one NATS (one nats-server, and a three-node
cluster) take judgments and reported deliberations of the same six agents at once, each
fitting the skill model every second: nothing acknowledged is lost, every skill event is
in the log once, the log is in order, replay equals the store, and each instance counts
its compare-and-sets on the skill states in /metrics."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest

from agentladder.natsserver import NatsServer, cluster
from agentladder.store.url import open_store
from tests.faults.check import check_store
from tests.faults.load import JUDGMENT, Expected, Load, Op
from tests.served import Server, start_server

AGENTS = [f"sim_{letter}" for letter in "abcdef"]
CONFIG = "skill: {fit_interval_s: 1}\nagents:\n" + "".join(
    f"  - name: {a}\n    backend: {{kind: simulated}}\n" for a in AGENTS
)
_COUNTER = re.compile(r'^agentladder_store_cas_(\w+)_total\{op="(\w+)"\} (\S+)$', re.M)


def _cas(server: Server) -> dict[tuple[str, str], float]:
    """The instance's compare-and-set counters: (attempts|conflicts|exhausted, op) -> n."""
    text = httpx.get(server.url("/metrics"), timeout=10).text
    return {(name, op): float(value) for name, op, value in _COUNTER.findall(text)}


def _skill_keys(op: Op) -> set[str]:
    """The skill events an acknowledged op must have left."""
    if op.path == JUDGMENT:
        return {f"judgment:{op.body['agent_id']}:{op.key}"}
    scored = any(
        values["aggregated_score"] is not None
        for reported in op.body["rounds"]
        for values in reported["agents"].values()
    )
    return {f"deliberation:{op.key}"} if scored else set()


async def _check(url: str, load: Load, expected: Expected) -> dict[str, int]:
    store = await open_store(url)
    try:
        figures = await check_store(store, expected)  # verify: profiles and skill replayed
        events, after = [], 0
        while page := await store.skill_events(after=after, limit=1000):
            events.extend(page)
            after = page[-1].seq
        seqs = [e.seq for e in events]
        assert seqs == sorted(set(seqs)), "the skill log is out of order"
        keys = [e.key for e in events]
        assert len(keys) == len(set(keys)), "a skill event applied twice"
        wanted = set().union(*(_skill_keys(load.sent[k]) for k in load.sent))
        assert wanted <= set(keys), sorted(wanted - set(keys))[:10]
        return {**figures, "skill_events": len(events)}
    finally:
        await store.close()


def _two_instances(tmp_path: Path, first_url: str, second_url: str, seed: int) -> None:
    load = Load(AGENTS, seed=seed)
    first = start_server(tmp_path, CONFIG, store=first_url, db="a.db")
    second = start_server(tmp_path, CONFIG, store=second_url, db="b.db")
    servers = [first, second]
    try:
        bases = [s.base for s in servers]
        stop, threads = load.start(4, bases)
        try:
            load.wait_acked(300, timeout=120)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
        load.retry_all(bases)
        expected = load.expected()
        counters = [_cas(s) for s in servers]
    finally:
        for server in servers:
            server.stop()
    figures = asyncio.run(_check(first_url, load, expected))
    for counted in counters:
        assert counted[("attempts", "skill")] > 0, counted
        assert ("conflicts", "skill") in counted, counted
        assert counted.get(("exhausted", "skill"), 0) == 0, counted
    conflicts = sum(c[("conflicts", "skill")] for c in counters)
    attempts = sum(c[("attempts", "skill")] for c in counters)
    print(f"{figures}; skill compare-and-sets {attempts:.0f}, conflicts {conflicts:.0f}")


def test_two_instances_on_one_nats_server_lose_nothing_and_replay_equal(
    session_nats_server: NatsServer, tmp_path: Path
) -> None:
    """Four clients across both instances until 300 writes are acknowledged, then every
    write sent again (acknowledged ones must be duplicates): the store holds each once,
    profiles and skill states equal their replay (verify), every skill event once, and
    neither instance gave up a compare-and-set."""
    url = f"{session_nats_server.url}?prefix=two{id(tmp_path) % 10_000}"
    _two_instances(tmp_path, url, url, seed=21)


@pytest.mark.faults
def test_two_instances_on_a_three_node_cluster_lose_nothing_and_replay_equal(
    tmp_path: Path,
) -> None:
    """The same on a three-node cluster (every bucket and stream with three replicas),
    each instance connected to another node first."""
    with cluster(3) as nodes:
        hosts = [n.url.removeprefix("nats://") for n in nodes]
        query = "?replicas=3&prefix=skills3"
        first = "nats://" + ",".join(hosts) + query
        second = "nats://" + ",".join(hosts[1:] + hosts[:1]) + query
        _two_instances(tmp_path, first, second, seed=23)
