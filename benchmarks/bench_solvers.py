"""The fit's two solvers on the same fleets: the exact, dense one against the large one
(``SkillRules.exact_limit``), on fleets with a known truth around the default limit.

Each fleet: ``agents`` agents, each with a true quality per task type (three types), drawn
U(3, 8.5) plus N(0, 0.7) and kept within 1-9.5; ``judgments`` judgments of a random agent
and type, scored truth + N(0, 1.5) within 0-10 and passed at 5 or more; imported into a
memory store (history, new agents) and fitted by ``SkillService.fit`` with an
``exact_limit`` above the fleet's unknowns (exact) and with 0 (large), on one BLAS thread
as ``serve`` fits. Each type's estimates are shifted by their mean difference from the
truth (a type's level is what the data identify, not its absolute place). Printed per
fleet and solver: the fit's CPU, the RMSE and Kendall's τ against the truth, and the
coverage of the 95% intervals (the share of true values inside); then the large solver's
CPU as a ratio to the exact one's.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks solvers``.
"""

from __future__ import annotations

import asyncio
import math
import random
import time

import numpy as np
from scipy.stats import kendalltau
from threadpoolctl import threadpool_limits

from agentladder.config import parse_settings
from agentladder.domain.skill.rules import SkillRules
from agentladder.importing.items import Item
from agentladder.importing.run import run_import
from agentladder.services.container import build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.skill.service import SkillService

TYPES = ("code", "docs", "sql")
FLEETS = ((250, 2_000, 1), (340, 8_000, 2), (500, 3_000, 3), (700, 4_000, 4))
"""(agents, judgments, seed): from about 1,000 unknowns (the default limit) to 2,800."""

Truth = dict[tuple[str, str], float]


def _fleet(agents: int, judgments: int, seed: int) -> tuple[Truth, list[Item]]:
    draw = random.Random(seed)
    truth = {
        (f"agent-{a}", t): min(9.5, max(1.0, draw.uniform(3, 8.5) + draw.gauss(0, 0.7)))
        for a in range(agents)
        for t in TYPES
    }
    items = []
    for i in range(judgments):
        agent, kind = f"agent-{draw.randrange(agents)}", draw.choice(TYPES)
        score = round(min(10.0, max(0.0, truth[(agent, kind)] + draw.gauss(0, 1.5))), 2)
        request = JudgmentRequest(
            agent_id=agent, contract_id=f"c{i}", task_type=kind, score=score,
            success=score >= 5, history=True, new_agent=True,
        )  # fmt: skip
        items.append(Item(where=f"line {i + 1}", request=request))
    return truth, items


def _measures(truth: Truth, found: dict[tuple[str, str], tuple[float, float]]) -> str:
    keys = sorted(k for k in found if k in truth)
    real = np.array([truth[k] for k in keys])
    mean = np.array([found[k][0] for k in keys])
    sd = np.array([found[k][1] for k in keys])
    kinds = np.array([k[1] for k in keys])
    for kind in TYPES:
        at = kinds == kind
        mean[at] += (real[at] - mean[at]).mean()
    rmse = math.sqrt(float(np.mean((mean - real) ** 2)))
    tau = float(kendalltau(mean, real).statistic)
    cover = float(np.mean(np.abs(mean - real) <= 1.959963984540054 * sd))
    return f"{len(keys):,} pairs, RMSE {rmse:.3f}, τ {tau:.3f}, coverage {cover:.3f}"


def _overall(found: dict[str, dict[str, tuple[float, float]]]) -> str:
    """The agents' overall skill by the two solvers: how far apart the means are, and the
    large solver's sd as a ratio to the exact one's (it takes the parts as independent)."""
    agents = sorted(set(found["exact"]) & set(found["large"]))
    gap = np.array([abs(found["large"][a][0] - found["exact"][a][0]) for a in agents])
    ratio = np.array([found["large"][a][1] / found["exact"][a][1] for a in agents])
    return (
        f"overall of {len(agents)} agents: means apart by p50 {np.median(gap):.3f},"
        f" max {gap.max():.3f}; sd large/exact p50 {np.median(ratio):.2f}"
        f" ({ratio.min():.2f}-{ratio.max():.2f})"
    )


async def _fleet_run(agents: int, judgments: int, seed: int) -> None:
    truth, items = _fleet(agents, judgments, seed)
    services = await build_services(parse_settings(None), store_url="memory://")
    try:
        await run_import(services.oracle, items, fit=False)
        spent: dict[str, float] = {}
        overall: dict[str, dict[str, tuple[float, float]]] = {}
        for name, limit in (("exact", 10**9), ("large", 0)):
            service = SkillService(services.store, SkillRules(exact_limit=limit))
            start = time.process_time()
            await service.fit(force=True)
            spent[name] = time.process_time() - start
            found = {
                (state.agent_id, kind): (est.mean, math.sqrt(est.var))
                for state in await services.store.list_skills()
                for kind, est in state.types.items()
            }
            overall[name] = {
                state.agent_id: (state.overall.mean, math.sqrt(state.overall.var))
                for state in await services.store.list_skills()
            }
            fleet = await services.store.get_fleet_skill()
            exact = fleet.fit is not None and fleet.fit.exact
            print(f"  {name:5} (exact={exact}): CPU {spent[name]:6.2f} s; "
                  f"{_measures(truth, found)}")  # fmt: skip
        print(f"  large/exact CPU: {spent['large'] / spent['exact']:.3f}; {_overall(overall)}")
    finally:
        await services.close()


def main() -> None:
    """Print each fleet's two fits."""
    with threadpool_limits(limits=1, user_api="blas"):
        for agents, judgments, seed in FLEETS:
            print(f"{agents} agents, {len(TYPES)} task types, {judgments:,} judgments, seed {seed}")
            asyncio.run(_fleet_run(agents, judgments, seed))


if __name__ == "__main__":
    main()
