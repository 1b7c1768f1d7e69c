"""Concurrent HTTP clients that remember what the service acknowledged, for the fault tests.

Each client thread sends judgments (``POST /oracle/judgments``) and, every few requests,
a deliberation run elsewhere (``POST /deliberations/results``), each with its own id. An
answer 2xx means acknowledged; a transport error or a 5xx means unknown (the request
may or may not have been applied). Afterwards :meth:`Load.retry_all` sends every request
again with the same id: an acknowledged one must come back as a duplicate (it was kept),
an unknown one is applied now or found applied. :meth:`Load.expected` says what the store
must then hold: every id applied exactly once.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["Expected", "Load", "Op"]

TASK_TYPES = ("code", "review", "research")
JUDGMENT = "/oracle/judgments"
RESULTS = "/deliberations/results"


@dataclass(frozen=True)
class Op:
    """One write request and the id that makes it idempotent."""

    path: str
    key: str
    body: dict[str, Any]


@dataclass
class Expected:
    """What the store must hold once every op is applied exactly once."""

    events: dict[str, set[str]]  # agent -> the keys of its judgment events
    completed: Counter[str]  # agent -> scored submissions of reported deliberations
    failed: Counter[str]  # agent -> unscored submissions
    deliberations: set[str]


@dataclass
class Load:
    """The ops sent so far and what came back for each."""

    agents: list[str]
    seed: int = 7
    sent: dict[str, Op] = field(default_factory=dict)
    acked: set[str] = field(default_factory=set)
    statuses: Counter[str] = field(default_factory=Counter)
    answers: list[tuple[float, str, str]] = field(default_factory=list)
    """(time.monotonic() the request was sent, its path, its status or transport error)"""
    starts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _op(self, rng: random.Random, worker: str, number: int) -> Op:
        task_type = rng.choice(TASK_TYPES)
        if number % 5 == 4:
            key = f"ext-{worker}-{number}"
            rounds = []
            for _ in range(rng.randint(1, 2)):
                agents = rng.sample(self.agents, 3)
                scores = {a: round(rng.uniform(3, 10), 2) for a in agents}
                if rng.random() < 0.2:
                    scores[agents[0]] = None  # type: ignore[assignment]
                rounds.append(
                    {
                        "agents": {
                            a: {"aggregated_score": s, "latency_ms": round(rng.uniform(50, 900))}
                            for a, s in scores.items()
                        }
                    }
                )
            body = {"deliberation_id": key, "rounds": rounds, "task_type": task_type}
            return Op(RESULTS, key, body)
        key = f"c-{worker}-{number}"
        judged: dict[str, Any] = {
            "agent_id": rng.choice(self.agents),
            "contract_id": key,
            "task_type": task_type,
            "score": round(rng.uniform(0, 10), 2),
            "duration_ms": rng.randint(100, 5000),
        }
        return Op(JUDGMENT, key, judged)

    def _send(self, client: httpx.Client, base: str, op: Op) -> dict[str, Any] | None:
        """The answer's body if acknowledged, else None (unknown)."""
        sent = time.monotonic()
        try:
            answer = client.post(base + op.path, json=op.body, timeout=10)
        except httpx.TransportError as error:
            with self._lock:
                self.statuses[type(error).__name__] += 1
                self.answers.append((sent, op.path, type(error).__name__))
            return None
        with self._lock:
            self.statuses[str(answer.status_code)] += 1
            self.answers.append((sent, op.path, str(answer.status_code)))
        if answer.status_code >= 500:
            return None
        assert answer.status_code < 300, (op, answer.status_code, answer.text)
        body: dict[str, Any] = answer.json()
        return body

    def worker(self, name: str, bases: list[str], stop: threading.Event) -> None:
        """Send ops until ``stop`` is set, to ``bases`` in turn."""
        rng = random.Random(f"{self.seed}-{name}")
        count = 0
        with httpx.Client() as client:
            while not stop.is_set():
                op = self._op(rng, name, count)
                count += 1
                with self._lock:
                    self.sent[op.key] = op
                answer = self._send(client, bases[count % len(bases)], op)
                if answer is None:
                    time.sleep(0.05)  # the service is down: do not spin
                    continue
                assert answer["duplicate"] is False, (op, answer)
                with self._lock:
                    self.acked.add(op.key)

    def start(
        self, workers: int, bases: list[str]
    ) -> tuple[threading.Event, list[threading.Thread]]:
        """``workers`` client threads sending to ``bases`` until the event is set."""
        stop = threading.Event()
        self.starts += 1
        threads = [
            threading.Thread(target=self.worker, args=(f"{self.starts}_{n}", bases, stop))
            for n in range(workers)
        ]
        for thread in threads:
            thread.start()
        return stop, threads

    def wait_acked(self, count: int, timeout: float = 60.0) -> None:
        """Block until ``count`` more ops are acknowledged."""
        target = len(self.acked) + count
        deadline = time.monotonic() + timeout
        while len(self.acked) < target:
            assert time.monotonic() < deadline, f"only {len(self.acked)} acknowledged"
            time.sleep(0.02)

    def retry_all(self, bases: list[str], timeout: float = 120.0) -> Counter[str]:
        """Send every op again until acknowledged. An op acknowledged before must come back
        as a duplicate; returns how many were: kept, applied now, found applied."""
        outcome: Counter[str] = Counter()
        deadline = time.monotonic() + timeout
        with httpx.Client() as client:
            for index, op in enumerate(list(self.sent.values())):
                while True:
                    answer = self._send(client, bases[index % len(bases)], op)
                    if answer is not None:
                        break
                    assert time.monotonic() < deadline, f"{op.key} never acknowledged"
                    time.sleep(0.1)
                if op.key in self.acked:
                    assert answer["duplicate"] is True, f"acknowledged {op.key} was lost"
                    outcome["kept"] += 1
                else:
                    outcome["found" if answer["duplicate"] else "applied now"] += 1
                    self.acked.add(op.key)
        return outcome

    def expected(self) -> Expected:
        """The store's content once every op sent is applied exactly once."""
        events: dict[str, set[str]] = {agent: set() for agent in self.agents}
        completed: Counter[str] = Counter()
        failed: Counter[str] = Counter()
        deliberations = set()
        for op in self.sent.values():
            if op.path == JUDGMENT:
                events[op.body["agent_id"]].add(op.key)
                continue
            deliberations.add(op.key)
            taking_part: set[str] = set()
            for reported in op.body["rounds"]:
                for agent, values in reported["agents"].items():
                    taking_part.add(agent)
                    (completed if values["aggregated_score"] is not None else failed)[agent] += 1
            for agent in taking_part:
                events[agent].add(f"{op.key}.{agent}")
        return Expected(events, completed, failed, deliberations)
