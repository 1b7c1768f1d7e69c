"""``agentladder demo``: eight simulated agents, sixty deliberations, on the embedded store.

The agents differ in hidden quality, noise, prices and latency; each deliberation picks
a task type and four agents (seeded, so every run is the same), runs two rounds, ranks
its agents by the floor rule and has the Oracle judge their work. The demo then shows the
rank table and the XP leaderboards, from the SQLite file it wrote.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentladder.config import AgentSettings, OrchestratorSettings, Settings
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.skill.board import SkillEntry
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.providers.settings import SimulatedSettings
from agentladder.providers.simulated import SimulatedProvider
from agentladder.services.agents.registry import Registry
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.service import SkillService
from agentladder.store.records import LeaderboardRow
from agentladder.store.sqlite.identity import FILE_SUFFIXES
from agentladder.store.sqlite.store import SqliteStore

__all__ = ["DEMO_AGENTS", "DEMO_DB", "TASK_TYPES", "DemoResult", "demo_settings", "run_demo"]

DEMO_DB = Path("agentladder-demo.db")
"""The SQLite file ``agentladder demo`` writes and ``agentladder serve --demo`` serves."""
TASK_TYPES = ("audit", "code_review", "summarization")

# name, provider, model, quality, noise, latency ms, input and output price per Mtok
DEMO_AGENTS: tuple[tuple[str, str, str, float, float, float, float, float], ...] = (
    ("atlas", "openai", "gpt-4o", 8.6, 0.4, 30, 2.5, 10.0),
    ("borealis", "anthropic", "claude-sonnet", 8.9, 0.3, 40, 3.0, 15.0),
    ("cirrus", "google", "gemini-flash", 7.4, 0.6, 10, 0.1, 0.4),
    ("dune", "mistral", "mistral-large", 7.9, 0.5, 25, 2.0, 6.0),
    ("ember", "meta", "llama-70b", 6.8, 0.8, 20, 0.6, 0.8),
    ("fjord", "openai", "gpt-4o-mini", 7.1, 0.5, 8, 0.15, 0.6),
    ("glacier", "qwen", "qwen-72b", 6.2, 0.9, 15, 0.4, 1.2),
    ("harbor", "deepseek", "deepseek-v3", 8.1, 0.5, 35, 0.3, 1.1),
)


@dataclass(frozen=True)
class DemoResult:
    """What the demo leaves to show."""

    db: Path
    deliberations: int
    stats: dict[str, AgentPerformanceStats]
    leaderboard: list[LeaderboardRow]
    by_task_type: dict[str, list[LeaderboardRow]]
    skills: list[SkillEntry] = field(default_factory=list)
    hidden_quality: dict[str, float] = field(default_factory=dict)


def ladder_note(result: DemoResult) -> str:
    """What rank and XP mean beside skill, with the demo's figures: every agent ends near
    the same rank and level by the seeds' rules, which reads like a bug unless said."""
    ranks = [stats.rank for stats in result.stats.values()] or [0]
    levels = [row.level.value for row in result.leaderboard]
    top = max(set(levels), key=levels.count) if levels else "rookie"
    return (
        f"Rank ({min(ranks)} to {max(ranks)} here) is the seed's floor-based promotion: in"
        " each deliberation the best scorer of the lowest rank group present moves up one,"
        " and rank never goes down, so after"
        f" {result.deliberations} deliberations every agent has climbed about as often as"
        " the others. It counts wins over peers of its own rank, not how good it is. XP and"
        " levels are the Oracle's positive-only ladder: every successful judged task pays at"
        " least 10 XP, a failed one 0 XP, and nothing takes XP away, so steady work climbs"
        f" whatever its quality"
        f" ({levels.count(top)} of {len(levels)} agents are {top} here). To compare agents,"
        " read skill: 0-10 with a 95% interval, what routing and the Sentinels go by"
        " (docs/skill.md)."
    )


def agents() -> list[AgentSettings]:
    """The demo's agents, with their simulated backends."""
    return [
        AgentSettings(
            name=name,
            provider_id=provider,
            model_name=model,
            capability_tags=(TASK_TYPES[i % 3], TASK_TYPES[(i + 1) % 3]),
            input_price_per_mtok=price_in,
            output_price_per_mtok=price_out,
            backend=SimulatedSettings(quality=quality, noise=noise, latency_ms=latency, seed=i),
        )
        for i, (name, provider, model, quality, noise, latency, price_in, price_out) in enumerate(
            DEMO_AGENTS
        )
    ]


def demo_settings(db: Path = DEMO_DB) -> Settings:
    """The configuration ``agentladder serve --demo`` serves: the demo's agents, in process,
    on the SQLite file ``db``, with the orchestrator settings the demo ran with."""
    return Settings(
        store=f"sqlite:///{db}",
        agents=tuple(agents()),
        orchestrator=OrchestratorSettings(mentor_examples=1),
    )


async def run_demo(
    db: Path, count: int = 60, on_progress: Callable[[int], None] | None = None
) -> DemoResult:
    """Run ``count`` deliberations into the SQLite file ``db`` (replaced if it exists)."""
    for suffix in FILE_SUFFIXES:  # a new demo store, on purpose
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    store = SqliteStore(db, synchronous="normal")
    try:
        configured = agents()
        by_name = {a.name: a for a in configured}
        skill = SkillService(store)
        registry = Registry(store, configured=configured, skill=skill)
        await registry.beat_local()
        oracle = Oracle(store, agents=by_name, skill=skill)
        providers = {
            a.name: SimulatedProvider(a.name, a.backend)
            for a in configured
            if isinstance(a.backend, SimulatedSettings)
        }
        orchestrator = Orchestrator(
            store=store, registry=registry, oracle=oracle, providers=providers,
            agents=by_name, settings=demo_settings(db).orchestrator,
        )  # fmt: skip
        rng = random.Random(2026)
        for number in range(count):
            task_type = TASK_TYPES[number % len(TASK_TYPES)]
            chosen = rng.sample(sorted(by_name), 4)
            await orchestrator.run(
                DeliberationRequest(
                    user_query=f"Demo question {number + 1} ({task_type})",
                    agent_names=chosen,
                    scope="standard",
                    task_type=task_type,
                )
            )
            await orchestrator.settle()
            if on_progress is not None:
                on_progress(number + 1)
        await skill.fit()  # every deliberation's evidence at once (docs/skill.md)
        stats = {agent: v.value for agent, v in (await store.list_stats()).items()}
        leaderboard = await oracle.get_leaderboard(limit=10)
        by_type = {t: await oracle.get_leaderboard(task_type=t, limit=3) for t in TASK_TYPES}
        hidden = {
            a.name: a.backend.quality
            for a in configured
            if isinstance(a.backend, SimulatedSettings)
        }
        return DemoResult(
            db, count, stats, leaderboard, by_type, await skill.board(None, 10), hidden
        )
    finally:
        await store.close()
