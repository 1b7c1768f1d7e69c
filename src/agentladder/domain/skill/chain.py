"""Time: an agent's skill at a task type may drift, jump at a model change, or change all
at once; the fit's linear system treats it as one value. Each (agent, task type)'s
evidence, one message per event in the order the events *happened* (``observed_at``, then
key: never arrival order), runs through two Kalman filters from the same start:

- ``still``: no dynamics (what the system assumes);
- ``moving``: a random walk of ``drift_sd_per_day`` per day between events, a jump of
  ``model_change_sd`` at each model change of the agent, and a change detector: a
  two-sided CUSUM (Page's) of each event's standardized innovation; when either side
  crosses ``change_threshold`` the estimate gains ``change_sd``² of variance and both
  start again from 0.

The fit's estimate is corrected by the difference of the two (mean and variance): with
evidence of one moment and no model change, none. All pairs run at once, event by event
(``run_chains``); ``step`` moves one estimate between two fits by one new event.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.observations import Index
from agentladder.domain.skill.rules import SkillRules

__all__ = [
    "DAY_S", "Chains", "Message", "Run", "Track", "chains_of", "run_chains", "step", "watched",
]  # fmt: skip

DAY_S = 86_400.0
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Message:
    """What one event says of the skill by itself: a Gaussian (mean, variance), at ``at``."""

    at: float
    mean: float
    var: float
    count: int


@dataclass(frozen=True, slots=True)
class Track:
    """A filter's state: the estimate, the time of its latest event, the detector's sums."""

    mean: float
    var: float
    at: float | None = None
    drop: float = 0.0
    rise: float = 0.0


def watched(
    drop: float, rise: float, prior: tuple[float, float], message: tuple[float, float],
    rules: SkillRules,
) -> tuple[float, float, bool]:  # fmt: skip
    """The detector after one event: its standardized innovation (the message against the
    prior), each counted at most half the threshold so that no one event is a change by
    itself. The new sums, and whether either crossed (both then start again from 0)."""
    if rules.change_threshold == 0.0:
        return drop, rise, False
    z = (message[0] - prior[0]) / math.sqrt(prior[1] + message[1])
    half = rules.change_threshold / 2.0
    z = max(-half, min(half, z))
    drop = max(0.0, drop - z - rules.change_allowance)
    rise = max(0.0, rise + z - rules.change_allowance)
    if drop > rules.change_threshold or rise > rules.change_threshold:
        return 0.0, 0.0, True
    return drop, rise, False


def step(track: Track, message: Message, jumps: list[float], rules: SkillRules) -> Track:
    """One event on the moving filter: drift to its time (and the model changes on the
    way), update, watch for a change. An event from before the track's latest is taken as
    of then (the next fit places it)."""
    var = track.var
    if track.at is not None and message.at > track.at:
        var += rules.drift_sd_per_day**2 * (message.at - track.at) / DAY_S
        between = bisect.bisect_right(jumps, message.at) - bisect.bisect_right(jumps, track.at)
        var += between * rules.model_change_sd**2
    post = 1.0 / (1.0 / var + 1.0 / message.var)
    mean = post * (track.mean / var + message.mean / message.var)
    drop, rise, changed = watched(
        track.drop, track.rise, (track.mean, var), (message.mean, message.var), rules
    )
    if changed:
        post += rules.change_sd**2
    at = message.at if track.at is None else max(track.at, message.at)
    return Track(mean=mean, var=post, at=at, drop=drop, rise=rise)


@dataclass(frozen=True)
class Chains:
    """The messages of every pair, pair by pair and in time order within a pair: each
    message's pair and the variance the moving filter adds before it (drift since the
    pair's previous event, model changes in between); the variance it adds after the pair's
    last message up to the fit (model changes); the messages by their rank within their
    pair (``by_rank``, a rank's first at ``bounds``)."""

    pair: Index
    added: Floats
    late: Floats
    by_rank: Index
    bounds: Ints


def chains_of(
    pair: Index, at: Floats, live: npt.NDArray[np.bool_], pair_agent: list[str],
    changes: dict[str, list[float]], pairs: int, rules: SkillRules,
) -> tuple[Chains, Index]:  # fmt: skip
    """The chain layout of messages given per (pair, time): one message per pair and time,
    ``live`` where it holds evidence that arrived as it happened (not history); and the
    order that sorts the messages into it.

    Drift acts on the time an agent was in use here: up to a live message, from the later
    of the previous message and the pair's first live one. History is of a fixed model
    version: no drift between history, nor from it to the first live evidence (a model
    change still jumps)."""
    order = np.lexsort((at, pair))
    p, t, now = pair[order], at[order], live[order]
    first = np.ones(len(p), dtype=bool)
    first[1:] = p[1:] != p[:-1]
    starts = np.flatnonzero(first)
    rank = np.arange(len(p)) - np.repeat(starts, np.diff(np.append(starts, len(p))))
    previous = np.where(first, t, np.roll(t, 1))
    begun = np.full(pairs, np.inf)
    np.minimum.at(begun, p[now], t[now])
    gap = np.where(now, np.maximum(t - np.maximum(previous, begun[p]), 0.0), 0.0)
    added = rules.drift_sd_per_day**2 * gap / DAY_S
    late = np.zeros(pairs)
    jump = rules.model_change_sd**2
    for index, agent in enumerate(pair_agent):
        times = changes.get(agent)
        if not times:
            continue
        low, high = np.searchsorted(p, index), np.searchsorted(p, index, side="right")
        if low == high:
            late[index] = len(times) * jump
            continue
        before = np.searchsorted(np.asarray(times), t[low:high], side="right")
        added[low:high] += np.diff(np.concatenate(([before[0]], before))) * jump
        late[index] = (len(times) - before[-1]) * jump
    depth = int(rank.max()) + 1 if len(rank) else 0
    by_rank = np.argsort(rank, kind="stable").astype(np.int32)
    bounds = np.searchsorted(rank[by_rank], np.arange(depth + 1)).astype(np.int64)
    chains = Chains(p.astype(np.int32), added, late, by_rank, bounds)
    return chains, order.astype(np.int32)


@dataclass(frozen=True)
class Run:
    """Both filters over every pair's messages: per pair the still filter's end (mean,
    var) and the moving one's (mean, var, drop, rise); per message, in chain order, the
    moving chain's smoothed mean at it (``smoothed``: what all the pair's evidence says of
    the skill at that time) and, when asked for, the moving filter's estimate after it
    (``path_mean``, ``path_var``: what was known then)."""

    still_mean: Floats
    still_var: Floats
    moving_mean: Floats
    moving_var: Floats
    drop: Floats
    rise: Floats
    smoothed: Floats
    path_mean: Floats | None
    path_var: Floats | None


def run_chains(
    chains: Chains, start_mean: Floats, start_var: Floats, mean: Floats, var: Floats,
    rules: SkillRules, path: bool = False,
) -> Run:  # fmt: skip
    """Both filters over every pair's messages (``mean``, ``var`` in chain order), all
    pairs at once, rank by rank, in place: ``mean`` becomes the moving filter's path, then
    (``smoothed_means``) the smoothed means; ``var`` the filtered variances (before a
    detected change's). The path is kept apart only when asked for (``path``)."""
    n_pairs = len(start_mean)
    still_m, still_v = start_mean.copy(), start_var.copy()
    move_m, move_v = start_mean.copy(), start_var.copy()
    drop, rise = np.zeros(n_pairs), np.zeros(n_pairs)
    path_v = np.zeros(len(mean)) if path else None
    threshold, half = rules.change_threshold, rules.change_threshold / 2.0
    changed_at = np.zeros(len(mean), dtype=np.bool_) if threshold > 0.0 else None
    by_rank, bounds = chains.by_rank, chains.bounds
    for r in range(len(bounds) - 1):
        m = by_rank[bounds[r] : bounds[r + 1]]
        p = chains.pair[m]
        x, v = mean[m], var[m]
        sv = 1.0 / (1.0 / still_v[p] + 1.0 / v)
        still_m[p] = sv * (still_m[p] / still_v[p] + x / v)
        still_v[p] = sv
        prior_v = move_v[p] + chains.added[m]
        post_v = 1.0 / (1.0 / prior_v + 1.0 / v)
        post_m = post_v * (move_m[p] / prior_v + x / v)
        var[m] = post_v  # filtered
        if changed_at is not None:
            z = np.clip((x - move_m[p]) / np.sqrt(prior_v + v), -half, half)
            d = np.maximum(0.0, drop[p] - z - rules.change_allowance)
            u = np.maximum(0.0, rise[p] + z - rules.change_allowance)
            changed = (d > threshold) | (u > threshold)
            post_v = post_v + np.where(changed, rules.change_sd**2, 0.0)
            drop[p] = np.where(changed, 0.0, d)
            rise[p] = np.where(changed, 0.0, u)
            changed_at[m] = changed
        move_m[p], move_v[p] = post_m, post_v
        mean[m] = post_m
        if path_v is not None:
            path_v[m] = post_v
    path_m = mean.copy() if path else None
    smoothed_means(chains, mean, var, changed_at, rules)
    return Run(still_m, still_v, move_m, move_v + chains.late, drop, rise, mean, path_m,
               path_v)  # fmt: skip


def smoothed_means(
    chains: Chains, mean: Floats, filtered: Floats, changed: npt.NDArray[np.bool_] | None,
    rules: SkillRules,
) -> None:  # fmt: skip
    """The Rauch-Tung-Striebel smoother over the moving chain, all pairs at once, from
    each pair's last message back, in place: ``mean`` (the filter's path) becomes the skill
    at each message's time given all the pair's messages. Between two messages the skill
    moves by a random walk whose variance is what the filter added there (drift, model
    changes, a detected change: ``changed``), so the gain of a message is its filtered
    variance over the next message's predicted one (its filtered variance, that change's,
    and what the next one added before it). With no dynamics the gain is 1 and every
    message reads the end: its one value."""
    n = len(mean)
    by_rank, bounds = chains.by_rank, chains.bounds
    for r in range(len(bounds) - 2, -1, -1):
        m = by_rank[bounds[r] : bounds[r + 1]]
        nxt = m + 1
        has = nxt < n
        m, nxt = m[has], nxt[has]
        same = chains.pair[nxt] == chains.pair[m]
        m, nxt = m[same], nxt[same]
        after = filtered[m]  # the filter's variance after m: as it predicted the next
        if changed is not None:
            after = after + np.where(changed[m], rules.change_sd**2, 0.0)
        gain = filtered[m] / (after + chains.added[nxt])
        mean[m] = mean[m] + gain * (mean[nxt] - mean[m])
