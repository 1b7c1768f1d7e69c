"""`agentladder serve` on NATS with the skill queue (``skill_queue=on``): judgments' skill
evidence, carried by their awards, applied by the one leased applier, off the request path.

- Back-pressure: a queue of 3 with its lease held elsewhere (no applier runs): the fourth
  judgment is answered 503 with ``Retry-After``, nothing of it stored (no award), counted
  in ``/metrics``; once the applier runs, the same judgment retried is applied once.
- Handover (``faults``): two instances under load, the one holding the queue SIGKILLed
  while it holds evidence: the other takes it once the lease ends, and every judgment is
  applied exactly once, the states equal to a replay of the log.
- A three-node cluster losing a node while the appliers run (``faults``): the same.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from agentladder.domain.skill import SkillRules
from agentladder.natsserver import NatsServer, cluster
from agentladder.services.skill.replay import verify_skills
from agentladder.store.url import open_store
from tests.faults.check import check_store
from tests.faults.load import JUDGMENT, Expected, Load
from tests.served import Server, start_server

AGENTS = [f"sim_{letter}" for letter in "abcdef"]
CONFIG = "orchestrator: {recover_interval_s: 0.5}\nagents:\n" + "".join(
    f"  - name: {a}\n    backend: {{kind: simulated}}\n" for a in AGENTS
)
QUEUED = "&skill_queue=on&skill_queue_lease_s=2"


def _metric(server: Server, name: str) -> float:
    """One unlabelled metric of ``/metrics``."""
    text = httpx.get(server.url("/metrics"), timeout=10).text
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    assert found is not None, f"{name} not in /metrics"
    return float(found.group(1))


def _drained(server: Server, timeout: float = 60.0) -> None:
    """Until the instance says the skill queue is empty."""
    deadline = time.monotonic() + timeout
    while _metric(server, "agentladder_skill_queue_depth") > 0:
        assert time.monotonic() < deadline, "the skill queue was never drained"
        time.sleep(0.1)


def _judgment(agent: str, contract: str) -> dict[str, object]:
    return {"agent_id": agent, "contract_id": contract, "task_type": "code", "score": 6.0}


def _skill_check(url: str, expected: Expected | None, judgments: set[str]) -> dict[str, int]:
    """The skill log holds the evidence of each of ``judgments`` (``<agent>:<contract>``)
    exactly once and no other judgment's; the states equal a replay of the log (what
    ``oracle verify`` checks, estimates within 1e-6); with ``expected``, the Oracle's
    content too (``check_store``)."""

    async def run() -> dict[str, int]:
        store = await open_store(url)
        try:
            events = await store.skill_events(limit=1_000_000)
            keys = Counter(e.key for e in events if e.key.startswith("judgment:"))
            assert set(keys) == {f"judgment:{j}" for j in judgments}, set(keys) ^ {
                f"judgment:{j}" for j in judgments
            }
            assert set(keys.values()) == {1}, [k for k, n in keys.items() if n > 1]
            report = await verify_skills(store, SkillRules())
            assert not report.differences, report.differences
            figures = {"judgment evidence": len(keys), "replayed": report.events_replayed}
            if expected is not None:
                figures.update(await check_store(store, expected))
            return figures
        finally:
            await store.close()

    return asyncio.run(run())


def _judged(load: Load) -> set[str]:
    return {f"{op.body['agent_id']}:{op.key}" for op in load.sent.values() if op.path == JUDGMENT}


def test_a_full_skill_queue_refuses_a_judgment_with_503_until_applied(tmp_path: Path) -> None:
    async def hold(url: str, release: bool) -> None:
        """Hold the queue's lease for 120 s (no applier of the instance can run), or give
        it up."""
        store = await open_store(url)
        try:
            queue = store.skill_queue()
            assert queue is not None
            now = time.time()
            for shard in range(queue.shards):
                if release:
                    await queue.release(shard, "test")
                else:
                    assert await queue.take(shard, "test", now + 120, now)
        finally:
            await store.close()

    with NatsServer() as nats_server:
        url = f"{nats_server.url}?prefix=full{QUEUED}&skill_queue_max_msgs=3"
        asyncio.run(hold(url, release=False))
        server = start_server(tmp_path, CONFIG, store=url)
        try:
            with httpx.Client(base_url=server.base, timeout=10) as client:
                for n in range(3):
                    answer = client.post(JUDGMENT, json=_judgment("sim_a", f"c{n}"))
                    assert answer.status_code == 200, answer.text
                xp = client.get("/oracle/profiles/sim_a").json()["xp"]
                refused = client.post(JUDGMENT, json=_judgment("sim_a", "c3"))
                assert refused.status_code == 503, refused.text
                assert refused.json()["error"]["code"] == "skill_queue_full"
                assert int(refused.headers["Retry-After"]) >= 1
                assert client.get("/oracle/profiles/sim_a").json()["xp"] == xp
                assert _metric(server, "agentladder_skill_queue_refusals_total") == 1
                assert _metric(server, "agentladder_skill_queue_depth") == 3
                assert _metric(server, "agentladder_skill_lag_seconds") > 0
                asyncio.run(hold(url, release=True))  # the instance's appliers take them
                _drained(server)
                answer = client.post(JUDGMENT, json=_judgment("sim_a", "c3"))
                assert answer.status_code == 200, answer.text
                assert answer.json()["duplicate"] is False
                assert client.get("/oracle/profiles/sim_a").json()["xp"] > xp
                _drained(server)
                assert _metric(server, "agentladder_skill_applied_total") == 4
                assert _metric(server, "agentladder_skill_lag_seconds") == 0
        finally:
            server.stop()
        figures = _skill_check(url, None, {f"sim_a:c{n}" for n in range(4)})
    assert figures["judgment evidence"] == 4


def _held(server: Server) -> float:
    return _metric(server, "agentladder_skill_shards_held")


@pytest.mark.faults
def test_the_applier_is_handed_over_when_its_instance_is_killed(tmp_path: Path) -> None:
    load = Load(AGENTS, seed=23)
    with NatsServer() as nats_server:
        url = f"{nats_server.url}?prefix=handover{QUEUED}"
        first = start_server(tmp_path, CONFIG, store=url, db="a.db")
        second = start_server(tmp_path, CONFIG, store=url, db="b.db")
        killed = False
        try:
            deadline = time.monotonic() + 30
            while _held(first) + _held(second) != 1:  # one of them holds the queue
                assert time.monotonic() < deadline, "the queue was not taken"
                time.sleep(0.1)
            if _held(second):
                first, second = second, first  # ``first`` is the holder, killed below
            stop, threads = load.start(6, [first.base, second.base])
            try:
                load.wait_acked(150)
                deadline = time.monotonic() + 30
                while (depth := _metric(second, "agentladder_skill_queue_depth")) == 0:
                    assert time.monotonic() < deadline, "the queue never held evidence"
                first.kill()  # while the queue holds evidence
                killed = True
                load.wait_acked(150, timeout=90)  # the survivor answers, and applies
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            outcome = load.retry_all([second.base])
            _drained(second)
            assert _held(second) == 1  # it took the queue from the killed instance
            applied = _metric(second, "agentladder_skill_applied_total")
        finally:
            if not killed:
                first.stop()
            second.stop()
        figures = _skill_check(url, load.expected(), _judged(load))
    assert outcome["kept"] >= 300
    print(
        f"queued at the kill {depth:.0f}; applied by the survivor {applied:.0f}; retries"
        f" {dict(outcome)}; statuses {dict(load.statuses)}; {figures}"
    )


@pytest.mark.faults
def test_a_cluster_losing_a_node_keeps_applying_skill_evidence_once(tmp_path: Path) -> None:
    load = Load(AGENTS, seed=29)
    with cluster(3) as nodes:
        hosts = [n.url.removeprefix("nats://") for n in nodes]
        query = f"?replicas=3&prefix=qcluster{QUEUED}"
        store_a = "nats://" + ",".join(hosts) + query
        store_b = "nats://" + ",".join(hosts[1:] + hosts[:1]) + query
        servers = [
            start_server(tmp_path, CONFIG, store=store_a, db="a.db"),
            start_server(tmp_path, CONFIG, store=store_b, db="b.db"),
        ]
        try:
            bases = [s.base for s in servers]
            stop, threads = load.start(6, bases)
            try:
                load.wait_acked(150)
                nodes[0].kill()  # the node the first instance is connected to
                load.wait_acked(150, timeout=90)
                nodes[0].start()
                nodes[0].wait_meta_leader()
                load.wait_acked(100, timeout=90)
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            outcome = load.retry_all(bases)
            for server in servers:
                _drained(server, timeout=90)
        finally:
            for server in servers:
                server.stop()
        figures = _skill_check(store_a, load.expected(), _judged(load))
    assert outcome["kept"] >= 400
    print(f"retries {dict(outcome)}; statuses {dict(load.statuses)}; {figures}")
