"""A fit turned into the states the stores keep: each agent's estimates (the fit's,
corrected for time by ``chain.py``), its record as evaluator, its history; the fleet's
levels, judges, spreads and the fit's own record.

**Overall** is one thing everywhere: the mean of the agent's skill over every task type
the fleet has evidence at, as each type is shown (``overall.py``), a type it has not done
counting as predicted from its general ability and that type's level (and
``type_spread``). The state keeps the mean of the latent skills and its variance under the
fit's joint posterior, the variance of the whole linear combination, so that estimates
that share evidence (one ability copied into several unseen types, a level, a judge's
leniency) are not averaged as if independent: the overall shown takes its correlation
from it. Its history point is the overall as shown.

The agents' states are made when asked for (``FitStates``) from what the fit keeps of
them (``_Parts``: per unknown, source and pair, and each pair's path), not all at once: a
commit writes them a group at a time, so that 10,000 agents' states (about 10 KB each with
their history) are never all held beside the fit, and the fit's per-observation arrays (the
table, the weights, the values) are not held while they are written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from dataclasses import replace as copied

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.fit import FitResult
from agentladder.domain.skill.observations import agent_source
from agentladder.domain.skill.overall import overall_of
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
from agentladder.domain.skill.terms import Held, Layout, Solution

__all__ = ["FitStates", "Snapshot", "snapshot_of"]

_MIN_VAR = 1e-8
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Snapshot:
    """Every agent's state and the fleet's, as one fit gives them."""

    agents: Mapping[str, AgentSkill]
    fleet: FleetSkill


class _Paths:
    """Each pair's path (its moving estimate after each of its events: time, mean, sd), in
    time order, made from the fit's arrays when its agent's state is made, and only its
    last ``history`` points (no more can be among the agent's last ``history`` points):
    neither a tuple for every event of the fleet nor an array of every event's point."""

    def __init__(self, fit: FitResult, keep: int) -> None:
        dyn, msg, sol = fit.dynamics, fit.messages, fit.solution
        assert dyn.path_mean is not None  # the fit keeps the paths
        assert dyn.path_var is not None
        self.path_mean, self.path_var = dyn.path_mean, dyn.path_var
        self.still_mean, self.still_var = dyn.still_mean, dyn.still_var
        self.mean, self.var = sol.mean, sol.var
        self.at = msg.at[msg.order]  # the messages' times in chain order: by pair, in time order
        self.ends = np.searchsorted(msg.chains.pair, np.arange(fit.lay.pairs + 1))
        self.keep = keep

    def __getitem__(self, p: int) -> list[tuple[float, float, float]]:
        low, high = int(self.ends[p]), int(self.ends[p + 1])
        tail = slice(max(low, high - self.keep), high)
        shift = self.mean[p] - self.still_mean[p]
        var = np.maximum(self.var[p] + self.path_var[tail] - self.still_var[p], _MIN_VAR)
        at = self.at[tail].tolist()
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


@dataclass(frozen=True)
class _Parts:
    """What the states are made of: the fit's posterior of the unknowns (without each
    observation's fitted values), its layout (without each observation's columns), the
    sources' learned noise and honesty, each pair's dynamics, and the names."""

    lay: Layout
    sol: Solution
    noise: Floats
    source_noise: Floats
    honesty: Floats
    at_bounds: Floats
    counts: _Counts
    types: list[str]
    sources: list[str]
    changes: dict[str, list[float]]
    spread: float  # type_spread squared
    per_pair: Ints  # observations
    last: Floats  # the time of the latest live evidence (-inf: history only)
    moving_mean: Floats
    moving_var: Floats
    still_mean: Floats
    still_var: Floats
    drop: Floats
    rise: Floats


def _parts(fit: FitResult, counts: _Counts) -> _Parts:
    obs, lay, dyn, msg = fit.obs, fit.lay, fit.dynamics, fit.messages
    last = np.full(lay.pairs, -np.inf)  # the latest live evidence: drift widens from there
    np.maximum.at(last, msg.pair[msg.live], msg.at[msg.live])
    none = np.empty(0)
    return _Parts(
        lay=copied(lay, cols=np.empty((0, 3), dtype=np.int32), group=np.empty(0, np.int32)),
        sol=copied(fit.solution, fitted=Held(none, none)),
        noise=fit.noise, source_noise=fit.source_noise, honesty=fit.honesty,
        at_bounds=fit.at_bounds, counts=counts, types=obs.types, sources=list(obs.sources),
        changes=obs.changes, spread=fit.type_spread**2,
        per_pair=np.bincount(obs.pair, minlength=lay.pairs), last=last,
        moving_mean=dyn.moving_mean, moving_var=dyn.moving_var, still_mean=dyn.still_mean,
        still_var=dyn.still_var, drop=dyn.drop, rise=dyn.rise,
    )  # fmt: skip


def _source_state(parts: _Parts, s: int) -> SourceState:
    lay, sol, counts = parts.lay, parts.sol, parts.counts
    mean, var = sol.mean, sol.var
    b = lay.b0 + s
    types = {}
    for v in counts.columns[s]:
        col = lay.v0 + v
        n_here = int(counts.source_type[v])
        types[parts.types[int(lay.st_type[v])]] = SourceType(
            bias_mean=float(mean[b] + mean[col]),
            bias_var=float(max(var[b] + var[col] + 2 * _cross(sol, b, col), _MIN_VAR)),
            noise_var=float(parts.noise[v]),
            n=n_here,
        )
    return SourceState(
        bias_mean=float(mean[b]),
        bias_var=float(max(var[b], _MIN_VAR)),
        noise_var=float(parts.source_noise[s]),
        honesty=float(parts.honesty[s]),
        n=int(counts.source[s]),
        types=types,
        at_bounds=float(parts.at_bounds[s]),
    )


def _shown(parts: _Parts, p: int) -> tuple[Estimate, float]:
    """A pair's estimate as shown (the fit's, moved by its chain's change) and that move."""
    delta_mean = float(parts.moving_mean[p] - parts.still_mean[p])
    delta_var = float(parts.moving_var[p] - parts.still_var[p])
    centre = float(parts.sol.mean[p]) + delta_mean
    var = max(float(parts.sol.var[p]) + delta_var, _MIN_VAR)
    last = float(parts.last[p])
    estimate = Estimate(
        mean=centre, var=var, n=int(parts.per_pair[p]), at=last if last > -np.inf else None,
        drop=float(parts.drop[p]), rise=float(parts.rise[p]), base_mean=centre, base_var=var,
    )  # fmt: skip
    return estimate, delta_mean


class FitStates(Mapping[str, AgentSkill]):
    """Every agent's state as the fit gives it (those it observed, in name order, then
    those seen only as evaluators), made each time one is asked for and not kept."""

    def __init__(self, fit: FitResult, rules: SkillRules, parts: _Parts) -> None:
        self._parts = parts
        self._paths = _Paths(fit, rules.history) if rules.history else None
        self._rules = rules
        lay = fit.lay
        self._by_agent: dict[int, list[int]] = defaultdict(list)
        for p in range(lay.pairs):
            self._by_agent[int(lay.pair_agent[p])].append(p)
        self._source_at = {name: i for i, name in enumerate(fit.obs.sources)}
        # agent -> its index among the observed, or -1 - its source's index
        self._where = {agent: a for a, agent in enumerate(fit.obs.agents)}
        for s, name in enumerate(fit.obs.sources):  # agents seen only as evaluators
            agent = name.removeprefix("agent:").split("#")[0]
            if name.startswith("agent:") and agent not in self._where:
                epoch = len(fit.obs.changes.get(agent, []))
                if name == agent_source(agent, epoch):
                    self._where[agent] = -1 - s

    def __getitem__(self, agent: str) -> AgentSkill:
        at = self._where[agent]
        if at >= 0:
            return self._observed(at, agent)
        epoch = len(self._parts.changes.get(agent, []))
        base = new_skill(agent, self._rules)
        return replace(base, evaluator=_source_state(self._parts, -1 - at), model_changes=epoch)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, agent: object) -> bool:
        return agent in self._where

    def _observed(self, a: int, agent: str) -> AgentSkill:
        parts, rules = self._parts, self._rules
        lay, sol = parts.lay, parts.sol
        mean, own = sol.mean, sol.var
        types = parts.types
        n_types = len(types)
        mine = self._by_agent[a]
        made = [_shown(parts, p) for p in mine]
        shown = [estimate for estimate, _ in made]
        corrections = [delta for _, delta in made]
        seen = {int(lay.pair_type[p]) for p in mine}
        q = lay.q0 + a
        weights = [1.0 / max(e.var, _MIN_VAR) for e in shown]
        ability_shift = sum(w * c for w, c in zip(weights, corrections, strict=True)) / sum(weights)
        # overall: the mean over the fleet's task types, unseen ones as predicted
        unseen = n_types - len(seen)
        support = [*mine, q, *(lay.l0 + t for t in range(n_types) if t not in seen)]
        coefs = [1.0 / n_types] * len(mine) + [unseen / n_types] + [1.0 / n_types] * unseen
        index, weight = np.array(support, dtype=np.int64), np.array(coefs)
        centre = float(weight @ mean[index])
        var = sol.quadratic_at(index, weight) + unseen * parts.spread / n_types**2
        centre += (sum(corrections) + unseen * ability_shift) / n_types
        var += sum(e.var - own[p] for e, p in zip(shown, mine, strict=True)) / n_types**2
        times = [e.at for e in shown if e.at is not None]
        last = max(times) if times else None
        count = int(sum(e.n for e in shown))
        overall = Estimate(mean=centre, var=max(var, _MIN_VAR), n=count, at=last,
                           base_mean=centre, base_var=max(var, _MIN_VAR))  # fmt: skip
        general = Estimate(mean=float(mean[q] + ability_shift), var=float(max(own[q], _MIN_VAR)))
        shown_overall = (0.0, 0.0)
        if rules.history:  # its history's last point: the overall as shown
            every_mean, every_var = _predicted(parts, general)
            for e, p in zip(shown, mine, strict=True):
                t = int(lay.pair_type[p])
                every_mean[t], every_var[t] = e.mean, e.var
            shown_overall = overall_of(every_mean, every_var, overall.var, rules)[:2]
        epoch = len(parts.changes.get(agent, []))
        found = self._source_at.get(agent_source(agent, epoch))
        evaluator = new_source(rules) if found is None else _source_state(parts, found)
        paths = self._paths
        return AgentSkill(
            agent_id=agent,
            overall=overall,
            evaluator=evaluator,
            types={types[int(lay.pair_type[p])]: e for e, p in zip(shown, mine, strict=True)},
            general=general,
            model_changes=epoch,
            history=_history(
                [
                    (types[int(lay.pair_type[p])], paths[p] if paths is not None else [])
                    for p in mine
                ],
                (last, *shown_overall),
                rules,
            ),
        )


def snapshot_of(fit: FitResult, rules: SkillRules, seq: int, events: int, at: float) -> Snapshot:
    """The states of every agent (made when asked for) and of the fleet after the fit of
    the log up to ``seq``."""
    parts = _parts(fit, _Counts(fit))
    return Snapshot(FitStates(fit, rules, parts), _fleet(fit, rules, seq, events, at, parts))


def _predicted(parts: _Parts, general: Estimate) -> tuple[Floats, Floats]:
    """The agent's mean and variance at every task type as predicted from its general
    ability plus each type's level, with ``type_spread`` (``live.prior_at`` on the fleet's
    state): where it has not done a type, what it reads there."""
    levels = slice(parts.lay.l0, parts.lay.l0 + len(parts.types))
    mean = parts.sol.mean[levels] + general.mean
    var = np.maximum(parts.sol.var[levels], _MIN_VAR) + general.var + parts.spread
    return mean.astype(np.float64), var.astype(np.float64)


def _history(
    typed: list[tuple[str, list[tuple[float, float, float]]]],
    overall: tuple[float | None, float, float],
    rules: SkillRules,
) -> tuple[Point, ...]:
    """The last ``history`` points: each task type's estimate after each of its events, in
    time order, and the overall as the fit shows it now (time, skill, sd)."""
    if not rules.history:
        return ()
    points: list[Point] = [(at, name, m, sd) for name, path in typed for at, m, sd in path]
    points.sort(key=lambda p: (p[0], p[1]))
    at, skill, sd = overall
    last = at or (points[-1][0] if points else 0.0)
    points.append((last, OVERALL, skill, sd))
    return tuple(points[-rules.history :])


def _fleet(
    fit: FitResult, rules: SkillRules, seq: int, events: int, at: float, parts: _Parts
) -> FleetSkill:
    obs, lay, sol = fit.obs, fit.lay, fit.solution
    per_type = np.bincount(lay.pair_type, minlength=lay.types)
    types = parts.types
    levels = {
        t: Estimate(
            mean=float(sol.mean[lay.l0 + i]),
            var=float(max(sol.var[lay.l0 + i], _MIN_VAR)),
            n=int(per_type[i]),
        )
        for i, t in enumerate(types)
    }
    st_weight = fit.anchor
    scales: dict[str, tuple[tuple[str, float], ...]] = {}
    for t, task_type in enumerate(types):
        here = np.flatnonzero(lay.st_type == t)
        total = float(st_weight[here].sum())
        if total <= 0.0:
            continue
        ranked = sorted(((float(st_weight[v]) / total, obs.sources[int(lay.st_source[v])])
                         for v in here), reverse=True)[:3]  # fmt: skip
        scales[task_type] = tuple((name, round(share, 4)) for share, name in ranked)
    sources = {
        name: _source_state(parts, s)
        for s, name in enumerate(obs.sources)
        if not name.startswith("agent:")
    }
    return FleetSkill(
        levels=levels,
        sources=sources,
        scales=scales,
        anchors={t: float(fit.scale_var[i]) for i, t in enumerate(types) if fit.scale_var[i] > 0},
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
