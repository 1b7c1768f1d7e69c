"""Overall as its task types show it: how far the overall's sd is from the joint
posterior's, and how often its 95% interval holds the mean of the task types drawn from
the posterior restricted to the scale, near the top of the scale above all.

Fleets of six agents (true skill 9.95, 9.7, 8.5, 6.0, 4.0 and 0.3) at eight task types,
each (agent, type) judged 10 times by one judge of noise 0.5 or 1.5 (scores clipped to
0-10), a fifth of the pairs not done (those types at their prediction), seeds 0-3.

- **sd**: the overall's sd (``domain/skill/overall.py``: the latent mean's sd under the
  joint posterior, narrowed by the task types' average factor) against the sd of the mean
  under the joint covariance with each type narrowed by its own factor (its shown sd over
  its latent one);
- **coverage**, of the three agents near an end: the share of draws of the mean of the
  task types from the fit's joint posterior restricted to the scale (rejection sampling:
  the draws whose every type lies within 0-10; ``drawn``: their mean) inside the
  overall's interval (``covers``), beside the same share for the rule before (``old``:
  the latent mean restricted to the scale afterwards; ``before``: its coverage).

And its cost (``cost``): the overall board (``skill_board``, tiers included) of 10,000
agents at 3 and 8 task types and of 300 agents at 3,000, each agent with evidence at up
to five of them, and one filter step's (which writes the overall shown into the agent's
history): the board's median of 5 runs, the step's mean of 1,000.

Run: ``.venv/bin/python -m benchmarks overall`` (``OVERALL_SEEDS=N``, default 4).
"""

from __future__ import annotations

import itertools
import math
import os
import random
import statistics
import time

import numpy as np

from agentladder.domain.skill import (
    AgentSkill,
    Estimate,
    FleetSkill,
    ScoreEvidence,
    SkillRules,
    apply_evidence,
    fit_observations,
    observations_of,
    skill_board,
    skill_view,
    snapshot_of,
)
from agentladder.domain.skill.evidence import Evidence
from agentladder.domain.skill.fit import FitResult
from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.live import prior_at
from agentladder.domain.skill.state import new_source

QUALITY = {"top": 9.95, "near": 9.7, "good": 8.5, "mid": 6.0, "low": 4.0, "bottom": 0.3}
TYPES = [f"type{i}" for i in range(8)]
START = 1_000_000.0
RULES = SkillRules()


def _judged(seed: int, noise: float) -> list[Evidence]:
    rng = random.Random(seed)
    out: list[Evidence] = []
    for agent, quality in QUALITY.items():
        for task_type in TYPES:
            if task_type != TYPES[0] and rng.random() < 0.2:
                continue  # not done: at its prediction
            for _ in range(10):
                score = min(10.0, max(0.0, round(quality + rng.gauss(0.0, noise), 2)))
                out.append(ScoreEvidence(key=f"j{len(out)}", at=START + len(out),
                                         agent_id=agent, task_type=task_type, score=score,
                                         judge="judge"))  # fmt: skip
    return out


def _joint(fit: FitResult, a: int) -> np.ndarray:
    """The covariance of agent ``a``'s latent skills at the fit's task types: its pair's
    unknown where it has one, else its ability plus the type's level (and type_spread)."""
    lay, sol = fit.lay, fit.solution
    pairs = {int(lay.pair_type[p]): p for p in range(lay.pairs) if int(lay.pair_agent[p]) == a}
    combos = [
        ({pairs[t]: 1.0}, 0.0) if t in pairs
        else ({lay.q0 + a: 1.0, lay.l0 + t: 1.0}, fit.type_spread**2)
        for t in range(len(fit.obs.types))
    ]  # fmt: skip
    count = len(combos)
    cov = np.zeros((count, count))
    for i, j in itertools.product(range(count), range(count)):
        cov[i, j] = sum(
            wu * wv * float(sol.cross(np.array([u]), np.array([v]))[0])
            for u, wu in combos[i][0].items()
            for v, wv in combos[j][0].items()
        ) + (combos[i][1] if i == j else 0.0)
    return cov


def _agent(name: str, names: list[str], rng: random.Random) -> AgentSkill:
    """An agent with evidence at up to five of the task types."""
    types = {
        t: Estimate(mean=rng.uniform(0.0, 11.0), var=rng.uniform(0.01, 1.0), n=5, at=1_000.0)
        for t in rng.sample(names, min(len(names), 5))
    }
    return AgentSkill(
        agent_id=name, overall=Estimate(mean=6.0, var=0.1, n=5, at=1_000.0),
        evaluator=new_source(RULES), general=Estimate(mean=0.0, var=0.2), types=types,
    )  # fmt: skip


def _cost() -> None:
    """The overall board and a filter step, timed on synthetic states."""
    rng = random.Random(0)
    for types, agents in ((3, 10_000), (8, 10_000), (3_000, 300)):
        names = [f"t{i}" for i in range(types)]
        fleet = FleetSkill(levels={t: Estimate(mean=6.0, var=0.01, n=100) for t in names})
        states = [_agent(f"a{i}", names, rng) for i in range(agents)]
        boards = []
        for _ in range(5):
            started = time.perf_counter()
            skill_board(states, fleet, None, 2_000.0, RULES)
            boards.append(time.perf_counter() - started)
        agent = {"a0": states[0]}
        started = time.perf_counter()
        for run in range(1_000):
            evidence = ScoreEvidence(key=f"k{run}", at=3_000.0 + run, agent_id="a0",
                                     task_type=names[1], score=7.0)  # fmt: skip
            agent.update(apply_evidence(agent, fleet, evidence, RULES).agents)
        step = (time.perf_counter() - started) / 1_000
        print(f"{agents:,} agents at {types:,} task types: the overall board"
              f" {statistics.median(boards):.2f} s (median of 5), a filter step"
              f" {step * 1e3:.3f} ms (mean of 1,000)")  # fmt: skip


def main() -> None:
    """Every fleet: the sd's error; near the top, coverage by the posterior's draws; then
    the cost."""
    seeds = int(os.environ.get("OVERALL_SEEDS", "4"))
    rng = np.random.default_rng(0)
    errors: list[float] = []
    shares: dict[bool, list[tuple[float, float]]] = {True: [], False: []}  # every type done
    print(f"{'seed':>4} {'noise':>5} {'agent':>6} {'types':>5} {'old':>6} {'shown':>6}"
          f" {'drawn':>6} {'sd':>6} {'ref sd':>6} {'covers':>6} {'before':>6}")  # fmt: skip
    for seed, noise in itertools.product(range(seeds), (0.5, 1.5)):
        events = _judged(seed, noise)
        fit = fit_observations(observations_of(events), RULES)
        snapshot = snapshot_of(fit, RULES, len(events), len(events), 0.0)
        fleet, names, now = snapshot.fleet, fit.obs.types, START + len(events)
        for a, agent in enumerate(fit.obs.agents):
            state = snapshot.agents[agent]
            cov = _joint(fit, a)
            views = [skill_view(state, fleet, t, now, RULES) for t in names]
            factor = np.array([v.sd / math.sqrt(prior_at(state, fleet, t, RULES).var)
                               for v, t in zip(views, names, strict=True)])  # fmt: skip
            reference = math.sqrt(float(factor @ cov @ factor)) / len(names)
            overall = skill_view(state, fleet, None, now, RULES)
            errors.append(overall.sd / reference - 1.0)
            old = on_scale(state.overall.mean, math.sqrt(state.overall.var), RULES.interval_z)
            covers = before = centre = float("nan")
            if agent in ("top", "near", "bottom"):
                means = np.array([prior_at(state, fleet, t, RULES).mean for t in names])
                kept: list[np.ndarray] = []
                for _ in range(40):
                    draws = rng.multivariate_normal(means, cov, size=100_000)
                    inside = np.all((draws >= 0.0) & (draws <= 10.0), axis=1)
                    kept.append(draws[inside].mean(axis=1))
                drawn = np.concatenate(kept)
                if len(drawn) >= 1_000:
                    covers = float(np.mean((drawn >= overall.low) & (drawn <= overall.high)))
                    before = float(np.mean((drawn >= old[2]) & (drawn <= old[3])))
                    centre = float(drawn.mean())
                    shares[len(state.types) == len(names)].append((covers, before))
            done = len(state.types)
            print(f"{seed:>4} {noise:>5} {agent:>6} {done:>5} {old[0]:6.3f} {overall.skill:6.3f}"
                  f" {centre:6.3f} {overall.sd:6.3f} {reference:6.3f} {covers:6.3f}"
                  f" {before:6.3f}")  # fmt: skip
            assert abs(overall.skill - statistics.fmean(v.skill for v in views)) <= 1e-9
    worst = max(abs(e) for e in errors)
    mean = statistics.fmean(abs(e) for e in errors)
    print(f"sd against the joint covariance narrowed type by type: within {worst:.1%}"
          f" (mean {mean:.2%}) over {len(errors)} agents")  # fmt: skip
    for done, pairs in shares.items():
        if pairs:
            now_, old_ = [p[0] for p in pairs], [p[1] for p in pairs]
            print(f"near an end, {'every type done' if done else 'some types predicted'}"
                  f" ({len(pairs)} agents): coverage median {statistics.median(now_):.3f}"
                  f" (lowest {min(now_):.3f}); before: median {statistics.median(old_):.3f}"
                  f" (lowest {min(old_):.3f})")  # fmt: skip
    _cost()


if __name__ == "__main__":
    main()
