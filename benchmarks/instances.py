"""Instances as processes of their own on one nats-server, started together: what the
multi-instance NATS benchmarks (``bench_nats_instances``, ``bench_nats_deliberations``)
share. Each instance runs ``body(url, ready, go, *args)``: it opens its store, puts
``None`` on ``ready``, waits for ``go``, works, and returns its figures (a dict)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import uuid
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

from agentladder.natsserver import NatsServer

__all__ = ["alternating", "cpu_seconds", "run_instances"]

T = TypeVar("T")
Body = Callable[..., Coroutine[Any, Any, dict[str, Any]]]


def alternating(configs: Sequence[T], runs: int) -> Iterator[tuple[int, T]]:
    """Each run's number and configuration: every configuration once per run, in turn,
    their order reversed every other run (so that no configuration always runs first)."""
    for run in range(runs):
        for config in configs if run % 2 == 0 else configs[::-1]:
            yield run, config


def cpu_seconds(pid: int | None) -> float:
    """A process's user + system CPU time so far (0 where ``/proc`` does not tell)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _worker(body: Body, url: str, ready: Any, go: Any, out: Any, args: tuple[Any, ...]) -> None:
    try:
        out.put(asyncio.run(body(url, ready, go, *args)))
    except BaseException as error:
        ready.put(None)
        out.put({"error": repr(error)})
        raise


def run_instances(
    server: NatsServer, body: Body, each: Sequence[tuple[Any, ...]], *, prefix: str,
    timeout_s: float,
) -> tuple[list[dict[str, Any]], float]:  # fmt: skip
    """One process per item of ``each`` (its extra arguments), all on a fresh prefix
    starting with ``prefix``, let go together once all are ready; their figures, and the
    nats-server's CPU seconds from the go to the last figures (``RuntimeError`` when an
    instance failed)."""
    context = multiprocessing.get_context("spawn")
    url = f"{server.url}?prefix={prefix}{uuid.uuid4().hex[:10]}"
    ready, out, go = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(target=_worker, args=(body, url, ready, go, out, args)) for args in each
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=120)
    server_cpu = cpu_seconds(server.pid)
    go.set()
    results = [out.get(timeout=timeout_s) for _ in processes]
    server_cpu = cpu_seconds(server.pid) - server_cpu
    for process in processes:
        process.join(timeout=60)
    failed = [r["error"] for r in results if "error" in r]
    if failed:
        raise RuntimeError(f"an instance failed: {failed[0]}")
    return results, server_cpu
