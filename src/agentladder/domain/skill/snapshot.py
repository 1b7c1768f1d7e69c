"""A fit turned into the states the stores keep: each agent's estimates (the fit's,
corrected for time by ``chain.py``), its record as evaluator, its history; the fleet's
levels, judges, spreads and the fit's own record.

**Overall** is one thing everywhere: the mean of the agent's skill over every task type
the fleet has evidence at, a type it has not done counting as predicted from its general
ability and that type's level (and ``type_spread``). Its variance is that of the whole
linear combination under the fit's joint posterior, so estimates that share evidence (one
ability copied into several unseen types, a level, a judge's leniency) are not averaged as
if independent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from agentladder.domain.skill.fit import FitResult
from agentladder.domain.skill.observations import agent_source
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import (
    OVERALL,
    AgentSkill,
    Estimate,
    FitInfo,
    FleetSkill,
    Point,
    SourceState,
    SourceType,
    Spreads,
    new_skill,
    new_source,
    replace,
)
from agentladder.domain.skill.terms import Solution

__all__ = ["Snapshot", "snapshot_of"]

_MIN_VAR = 1e-8


@dataclass(frozen=True)
class Snapshot:
    """Every agent's state and the fleet's, as one fit gives them."""

    agents: dict[str, AgentSkill]
    fleet: FleetSkill


class _Paths:
    """Each pair's path (its moving estimate after each of its events: time, mean, sd), in
    time order, made from the fit's arrays when its agent's state is made, and only its
    last ``history`` points (no more can be among the agent's last ``history`` points):
    neither a tuple for every event of the fleet nor an array of every event's point."""

    def __init__(self, fit: FitResult, keep: int) -> None:
        self.dyn, self.msg, self.sol = fit.dynamics, fit.messages, fit.solution
        assert self.dyn.path_mean is not None  # the fit keeps the paths
        assert self.dyn.path_var is not None
        self.path_mean, self.path_var = self.dyn.path_mean, self.dyn.path_var
        # the messages in chain order: by pair, in time order
        self.ends = np.searchsorted(self.msg.chains.pair, np.arange(fit.lay.pairs + 1))
        self.keep = keep

    def __getitem__(self, p: int) -> list[tuple[float, float, float]]:
        low, high = int(self.ends[p]), int(self.ends[p + 1])
        tail = slice(max(low, high - self.keep), high)
        dyn, sol = self.dyn, self.sol
        shift = sol.mean[p] - dyn.still_mean[p]
        var = np.maximum(sol.var[p] + self.path_var[tail] - dyn.still_var[p], _MIN_VAR)
        at = self.msg.at[self.msg.order[tail]].tolist()
        mean, sd = (self.path_mean[tail] + shift).tolist(), np.sqrt(var).tolist()
        return list(zip(at, mean, sd, strict=True))


def _cross(sol: Solution, i: int, j: int) -> float:
    return float(sol.cross(np.array([i]), np.array([j]))[0])


class _Counts:
    """How many scores each source and each (source, task type) gave, and each source's
    (source, task type) columns."""

    def __init__(self, fit: FitResult) -> None:
        lay = fit.lay
        scored = fit.obs.source >= 0
        self.source = np.bincount(fit.obs.source[scored], minlength=lay.sources)
        self.source_type = np.bincount(lay.cols[scored, 2] - lay.v0, minlength=lay.source_types)
        self.columns: dict[int, list[int]] = defaultdict(list)
        for v, s in enumerate(lay.st_source):
            self.columns[int(s)].append(v)


def _source_state(fit: FitResult, s: int, counts: _Counts) -> SourceState:
    lay, sol = fit.lay, fit.solution
    mean, var = sol.mean, sol.var
    b = lay.b0 + s
    types = {}
    obs_types = fit.obs.types
    for v in counts.columns[s]:
        col = lay.v0 + v
        n_here = int(counts.source_type[v])
        types[obs_types[int(lay.st_type[v])]] = SourceType(
            bias_mean=float(mean[b] + mean[col]),
            bias_var=float(max(var[b] + var[col] + 2 * _cross(sol, b, col), _MIN_VAR)),
            noise_var=float(fit.noise[v]),
            n=n_here,
        )
    return SourceState(
        bias_mean=float(mean[b]),
        bias_var=float(max(var[b], _MIN_VAR)),
        noise_var=float(fit.source_noise[s]),
        honesty=float(fit.honesty[s]),
        n=int(counts.source[s]),
        types=types,
        at_bounds=float(fit.at_bounds[s]),
    )


def snapshot_of(fit: FitResult, rules: SkillRules, seq: int, events: int, at: float) -> Snapshot:
    """The states of every agent and of the fleet after the fit of the log up to ``seq``."""
    obs, lay, sol = fit.obs, fit.lay, fit.solution
    mean, own = sol.mean, sol.var
    dyn, msg = fit.dynamics, fit.messages
    per_pair = np.bincount(obs.pair, minlength=lay.pairs)
    last = np.full(lay.pairs, -np.inf)
    np.maximum.at(last, msg.pair, msg.at)
    shown: dict[int, Estimate] = {}
    corrections: dict[int, float] = {}
    for p in range(lay.pairs):
        delta_mean = float(dyn.moving_mean[p] - dyn.still_mean[p])
        delta_var = float(dyn.moving_var[p] - dyn.still_var[p])
        centre = float(mean[p]) + delta_mean
        var = max(float(own[p]) + delta_var, _MIN_VAR)
        corrections[p] = delta_mean
        shown[p] = Estimate(
            mean=centre, var=var, n=int(per_pair[p]), at=float(last[p]),
            drop=float(dyn.drop[p]), rise=float(dyn.rise[p]), base_mean=centre, base_var=var,
        )  # fmt: skip
    paths = _Paths(fit, rules.history) if rules.history else None
    counts = _Counts(fit)
    states = _agents(fit, rules, shown, corrections, paths, counts)
    for s, name in enumerate(obs.sources):  # agents seen only as evaluators
        agent = name.removeprefix("agent:").split("#")[0]
        if name.startswith("agent:") and agent not in states:
            epoch = len(obs.changes.get(agent, []))
            if name == agent_source(agent, epoch):
                base = new_skill(agent, rules)
                states[agent] = replace(
                    base, evaluator=_source_state(fit, s, counts), model_changes=epoch
                )
    return Snapshot(states, _fleet(fit, rules, seq, events, at, counts))


def _agents(
    fit: FitResult,
    rules: SkillRules,
    shown: dict[int, Estimate],
    corrections: dict[int, float],
    paths: _Paths | None,
    counts: _Counts,
) -> dict[str, AgentSkill]:
    obs, lay, sol = fit.obs, fit.lay, fit.solution
    mean, own = sol.mean, sol.var
    types = obs.types
    n_types = len(types)
    spread = fit.type_spread**2
    by_agent: dict[int, list[int]] = defaultdict(list)
    for p in range(lay.pairs):
        by_agent[int(lay.pair_agent[p])].append(p)
    source_at = {name: i for i, name in enumerate(obs.sources)}
    out: dict[str, AgentSkill] = {}
    for a, agent in enumerate(obs.agents):
        mine = by_agent[a]
        seen = {int(lay.pair_type[p]): p for p in mine}
        q = lay.q0 + a
        weights = [1.0 / max(shown[p].var, _MIN_VAR) for p in mine]
        ability_shift = sum(w * corrections[p] for w, p in zip(weights, mine, strict=True)) / sum(
            weights
        )
        # overall: the mean over the fleet's task types, unseen ones as predicted
        unseen = n_types - len(seen)
        support = [*mine, q, *(lay.l0 + t for t in range(n_types) if t not in seen)]
        coefs = [1.0 / n_types] * len(mine) + [unseen / n_types] + [1.0 / n_types] * unseen
        index, weight = np.array(support, dtype=np.int64), np.array(coefs)
        centre = float(weight @ mean[index])
        var = sol.quadratic_at(index, weight) + unseen * spread / n_types**2
        centre += (sum(corrections[p] for p in mine) + unseen * ability_shift) / n_types
        var += sum(shown[p].var - own[p] for p in mine) / n_types**2
        last = max((shown[p].at or 0.0) for p in mine)
        count = int(sum(shown[p].n for p in mine))
        overall = Estimate(mean=centre, var=max(var, _MIN_VAR), n=count, at=last,
                           base_mean=centre, base_var=max(var, _MIN_VAR))  # fmt: skip
        general = Estimate(mean=float(mean[q] + ability_shift), var=float(max(own[q], _MIN_VAR)))
        epoch = len(obs.changes.get(agent, []))
        found = source_at.get(agent_source(agent, epoch))
        evaluator = new_source(rules) if found is None else _source_state(fit, found, counts)
        out[agent] = AgentSkill(
            agent_id=agent,
            overall=overall,
            evaluator=evaluator,
            types={types[int(lay.pair_type[p])]: shown[p] for p in mine},
            general=general,
            model_changes=epoch,
            history=_history(
                [
                    (types[int(lay.pair_type[p])], paths[p] if paths is not None else [])
                    for p in mine
                ],
                overall,
                rules,
            ),
        )
    return out


def _history(
    typed: list[tuple[str, list[tuple[float, float, float]]]], overall: Estimate, rules: SkillRules
) -> tuple[Point, ...]:
    """The last ``history`` points: each task type's estimate after each of its events, in
    time order, and the overall estimate as the fit gives it now."""
    if not rules.history:
        return ()
    points: list[Point] = [(at, name, m, sd) for name, path in typed for at, m, sd in path]
    points.sort(key=lambda p: (p[0], p[1]))
    last = overall.at or (points[-1][0] if points else 0.0)
    points.append((last, OVERALL, overall.mean, math.sqrt(overall.var)))
    return tuple(points[-rules.history :])


def _fleet(
    fit: FitResult, rules: SkillRules, seq: int, events: int, at: float, counts: _Counts
) -> FleetSkill:
    obs, lay, sol = fit.obs, fit.lay, fit.solution
    per_type = np.bincount(lay.pair_type, minlength=lay.types)
    levels = {
        t: Estimate(
            mean=float(sol.mean[lay.l0 + i]),
            var=float(max(sol.var[lay.l0 + i], _MIN_VAR)),
            n=int(per_type[i]),
        )
        for i, t in enumerate(obs.types)
    }
    scored = obs.source >= 0
    st_weight = np.bincount(lay.cols[scored, 2] - lay.v0, weights=fit.weight[scored],
                            minlength=lay.source_types)  # fmt: skip
    scales: dict[str, tuple[tuple[str, float], ...]] = {}
    for t, task_type in enumerate(obs.types):
        here = np.flatnonzero(lay.st_type == t)
        total = float(st_weight[here].sum())
        if total <= 0.0:
            continue
        ranked = sorted(((float(st_weight[v]) / total, obs.sources[int(lay.st_source[v])])
                         for v in here), reverse=True)[:3]  # fmt: skip
        scales[task_type] = tuple((name, round(share, 4)) for share, name in ranked)
    sources = {
        name: _source_state(fit, s, counts)
        for s, name in enumerate(obs.sources)
        if not name.startswith("agent:")
    }
    return FleetSkill(
        levels=levels,
        sources=sources,
        scales=scales,
        spreads=Spreads(fit.type_spread, fit.leniency, fit.difficulty),
        fit=FitInfo(
            seq=seq,
            events=events,
            observations=len(obs),
            at=at,
            rules=rules.digest(),
            exact=fit.exact,
            iterations=fit.iterations,
        ),
    )
