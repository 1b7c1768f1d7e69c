"""No request and no stored data stops the event loop, against a real `agentladder serve`
on loopback: with heavy reads in flight (the dashboard of a store holding 10,000 task
types, the skill board, the routing page) ``/healthz`` answers every time it is asked;
and SIGTERM stops the server whatever it is doing, a write stuck on a SQLite file another
process holds locked included, with nothing acknowledged lost.

Before: the dashboard's index computed and rendered every task type's boards on the event
loop (19.6 MB in 5.5 to 9.5 s on a store like this one; ``/healthz`` waited up to 6.5 s
behind one, and this test saw several of its 15 go unanswered for 5 s); a SIGTERM while a
write waited for the file's lock waited out SQLite's 60 s busy timeout, and the lease's
drop at shutdown waited again."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import threading
import time
from pathlib import Path

import httpx

from agentladder.domain.profile import AgentProfile, Specialization
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, Estimate, FleetSkill, new_skill
from agentladder.store.records import OracleCommit, OracleEvent, OracleEventKind
from agentladder.store.skills import SkillCommit, SkillEvent
from agentladder.store.url import open_store
from tests.served import Server, start_server

AGENTS, TYPES = 200, 50  # 10,000 task types in the store, the default bound
HEAVY = ["/dashboard", "/skills", "/dashboard/routing", "/dashboard/agents/crowd0"]
CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
api:
  shutdown_grace_s: 1
"""


def _profile(agent: str, n: int) -> AgentProfile:
    specs = {
        f"t{n}-{t}": Specialization(xp=10 + t, tasks_completed=1, tasks_judged=1,
                                    avg_score=5.0 + t % 5, best_score=5.0 + t % 5)
        for t in range(TYPES)
    }  # fmt: skip
    return AgentProfile(id=agent, xp=10 * TYPES, specializations=specs)


def _skill(agent: str, n: int, at: float) -> AgentSkill:
    base = new_skill(agent, SkillRules())
    types = {f"t{n}-{t}": Estimate(mean=5.0 + t % 5, var=0.5, n=3, at=at) for t in range(TYPES)}
    return AgentSkill(agent_id=agent, overall=base.overall, evaluator=base.evaluator, types=types)


async def _crowd(path: Path) -> None:
    """A store whose agents hold 10,000 task types between them, written as one profile
    and one skill state per agent (what 10,000 judgments would leave)."""
    at = time.time()
    store = await open_store(f"sqlite:///{path}")
    try:
        for n in range(AGENTS):
            agent = f"crowd{n}"
            event = OracleEvent(
                agent_id=agent, key=f"seed:{n}", kind=OracleEventKind.JUDGMENT, payload={},
                payload_hash="seed", result={}, at="2026-12-01T00:00:00",
            )  # fmt: skip
            await store.commit_oracle(OracleCommit(event=event, profile=_profile(agent, n)), 0)

            def fold(
                states: object, fleet: FleetSkill, agent: str = agent, n: int = n
            ) -> SkillCommit:
                seeded = SkillEvent(key=f"seed:{n}", kind="judgment", payload="{}",
                                    payload_hash="seed", at=at)  # fmt: skip
                return SkillCommit(seeded, {agent: _skill(agent, n, at)}, None)

            await store.apply_skill(f"seed:{n}", [agent], fold)
    finally:
        await store.close()


def _hammer(server: Server, paths: list[str], stop: threading.Event, answers: list[int]) -> None:
    """Ask for ``paths`` again and again until told to stop."""
    with httpx.Client(timeout=120) as client:
        while not stop.is_set():
            for path in paths:
                try:
                    answers.append(client.get(server.url(path)).status_code)
                except httpx.HTTPError:
                    answers.append(0)


def test_healthz_answers_while_heavy_reads_run(tmp_path: Path) -> None:
    """Two clients ask for the dashboard's index without pause, a third for the skill
    board, the routing page and an agent page; meanwhile each of 15 ``/healthz`` requests
    is answered 200 within 5 s (a bound on answering at all, not a speed); every heavy read
    is answered 200."""
    asyncio.run(_crowd(tmp_path / "served.db"))
    server = start_server(tmp_path, CONFIG)
    stop = threading.Event()
    answers: list[int] = []
    clients = [
        threading.Thread(target=_hammer, args=(server, paths, stop, answers))
        for paths in (["/dashboard"], ["/dashboard"], HEAVY[1:])
    ]
    try:
        for client in clients:
            client.start()
        time.sleep(1.0)  # the heavy reads are under way
        health = []
        with httpx.Client(timeout=5) as probe:
            for _ in range(15):
                try:
                    health.append(probe.get(server.url("/healthz")).status_code)
                except httpx.TimeoutException:
                    health.append(0)
                time.sleep(0.2)
        assert health == [200] * 15, health
    finally:
        stop.set()
        for client in clients:
            client.join(timeout=120)
        server.stop()
    assert answers, "no heavy read finished"
    assert set(answers) == {200}, answers


def test_sigterm_stops_the_server_while_a_write_waits_for_a_locked_file(
    tmp_path: Path,
) -> None:
    """Another process holds the SQLite file's write lock; a judgment waits for it; SIGTERM:
    the server ends itself (its watchdog, 5 s after its 1 s grace: exit status 1, telling
    what each thread was doing), not killed by the test; the judgments acknowledged before
    are all there at restart."""
    server = start_server(tmp_path, CONFIG)
    path = tmp_path / "served.db"
    judged = {"agent_id": "sim_a", "score": 8.0}
    for n in range(5):
        answer = httpx.post(
            server.url("/oracle/judgments"), json={**judged, "contract_id": f"c{n}"}
        )
        assert answer.status_code == 200, answer.text
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a backup tool, a sqlite3 shell: the write lock held
    stuck: list[object] = []
    waiting = threading.Thread(
        target=lambda: stuck.append(_post_quietly(server, {**judged, "contract_id": "c-stuck"}))
    )
    try:
        waiting.start()
        time.sleep(1.0)  # the judgment is waiting for the lock
        assert waiting.is_alive()
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(timeout=120)  # only how long to wait for it to end
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
        waiting.join(timeout=60)
    output = server.output()
    assert "the stop overran its 6 s (api.shutdown_grace_s + 5)" in output, output[-3000:]
    assert "Thread" in output  # the dump of what each thread was doing
    assert code == 1  # the watchdog's exit, not a kill (-9) or a clean stop (0)
    again = start_server(tmp_path, CONFIG)
    try:
        history = httpx.get(again.url("/oracle/profiles/sim_a/history?limit=1000")).json()
        contracts = {entry["contract_id"] for entry in history["entries"]}
        assert {f"c{n}" for n in range(5)} <= contracts
    finally:
        again.stop()


def _post_quietly(server: Server, body: dict[str, object]) -> int:
    """POST a judgment; its status, or 0 when the server went away first."""
    try:
        return httpx.post(server.url("/oracle/judgments"), json=body, timeout=120).status_code
    except httpx.HTTPError:
        return 0
