"""The fit's time chains: each observation's event as one message per (agent, task type),
built from the system's solution in each round of the fit and run through
``chain.run_chains``. What they give back: how far each event's skill lay from the
system's one value (so that a score after a real change is not taken for an outlier), and
the correction of each pair's estimate for time (``snapshot.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.chain import Chains, chains_of, run_chains
from agentladder.domain.skill.observations import Index, Observations
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.terms import Layout, Solution

__all__ = ["Dynamics", "MessageLayout", "dynamics", "message_layout"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
_NOTHING = 1e12  # the variance of a message that says nothing


@dataclass(frozen=True)
class MessageLayout:
    """Each observation's message (one per pair and event: ``of``), the messages' pairs and
    times, and their chain layout (``order``: chain position to message). Where no event
    has two observations of one pair (a log of judgments), each observation is its own
    message: ``of`` is None, the messages are the observations in their order, and ``pair``
    and ``at`` are the table's own arrays, not copies."""

    of: Index | None
    pair: Index
    at: Floats
    chains: Chains
    order: Index

    def observed(self, per_message: Floats) -> Floats:
        """A value per message, given per observation (its message's)."""
        return per_message if self.of is None else per_message[self.of]

    def summed(self, per_observation: Floats) -> Floats:
        """Per message, the sum of its observations' values, in their order."""
        if self.of is None:
            return per_observation + 0.0  # a sum of one, as np.bincount makes it (-0.0 is 0.0)
        sums = np.bincount(self.of, weights=per_observation, minlength=len(self.pair))
        return np.asarray(sums, dtype=np.float64)


@dataclass(frozen=True)
class Dynamics:
    """One run of the chains: per message (in message order) the moving filter's estimate
    after it and the smoothed one at it; per pair both filters' ends and the detector's
    sums."""

    path_mean: Floats
    path_var: Floats
    still_mean: Floats
    still_var: Floats
    moving_mean: Floats
    moving_var: Floats
    drop: Floats
    rise: Floats
    smoothed: Floats

    def deviation(self, lay: MessageLayout) -> Floats:
        """Per message: how far the skill at its time (the moving chain smoothed over all
        the pair's messages) lies from the pair's one value (the still filter's end); 0
        for every message of a pair whose skill did not move."""
        return self.smoothed - self.still_mean[lay.pair]


def message_layout(obs: Observations, lay: Layout, rules: SkillRules) -> MessageLayout:
    """The messages of the evidence and their chains (the chains do not depend on how the
    messages are numbered: they are ordered by pair, time and event, all distinct)."""
    agents = obs.agents
    pair_agent = [agents[int(a)] for a in lay.pair_agent]
    width = np.int64(max(obs.event_count, 1))  # the key in int64
    key = obs.pair * width + obs.event
    keys, first, of = np.unique(key, return_index=True, return_inverse=True)
    del key
    if len(keys) == len(obs):  # each observation its own message
        del keys, first, of
        chains, order = chains_of(obs.pair, obs.at, obs.event, pair_agent, obs.changes,
                                  lay.pairs, rules)  # fmt: skip
        return MessageLayout(None, obs.pair, obs.at, chains, order)
    pair = (keys // width).astype(np.int32)
    event = (keys % width).astype(np.int32)
    at = obs.at[first]
    chains, order = chains_of(pair, at, event, pair_agent, obs.changes, lay.pairs, rules)
    return MessageLayout(of.reshape(-1).astype(np.int32), pair, at, chains, order)


def dynamics(
    obs: Observations, lay: Layout, msg: MessageLayout, sol: Solution, weight: Floats,
    value: Floats, type_spread: float, rules: SkillRules,
) -> Dynamics:  # fmt: skip
    """The chains over what each event says of its pair's skill alone: its observations'
    values less their sources' leniencies and their deliberation's offset, weighed (the
    offset's uncertainty added, since the event's scores share it)."""
    mean = sol.mean
    scored = obs.source >= 0
    cols = lay.cols
    lenient = np.where(
        scored, mean[np.maximum(cols[:, 1], 0)] + mean[np.maximum(cols[:, 2], 0)], 0.0
    )
    grouped = obs.group >= 0
    gk = np.where(grouped, obs.group, 0)
    offset = np.where(grouped, sol.offset[gk], 0.0) if lay.groups else np.zeros(len(obs))
    spread = np.where(grouped, sol.offset_var[gk], 0.0) if lay.groups else np.zeros(len(obs))
    said = value - lenient - offset
    del lenient, offset, grouped, gk  # each as long as the observations: freed early
    n = len(msg.pair)
    total = msg.summed(weight)
    sums = msg.summed(weight * said)
    share = msg.summed(spread)
    if msg.of is not None:
        share /= np.maximum(np.bincount(msg.of, minlength=n), 1)
    m_mean = np.where(total > 0.0, sums / np.where(total > 0.0, total, 1.0), 0.0)
    m_var = np.where(total > 0.0, 1.0 / np.where(total > 0.0, total, 1.0) + share, _NOTHING)
    q = lay.q0 + lay.pair_agent
    lv = lay.l0 + lay.pair_type
    start_mean = mean[q] + mean[lv]
    start_var = type_spread + sol.var[q] + sol.var[lv]
    order = msg.order
    chain_mean, chain_var = m_mean[order], m_var[order]
    del said, spread, total, sums, share, m_mean, m_var
    still_m, still_v, move_m, move_v, drop, rise, path_m, path_v, smooth_m = run_chains(
        msg.chains, start_mean, start_var, chain_mean, chain_var, rules
    )
    del chain_mean, chain_var
    path_mean = np.empty(n)
    path_var = np.empty(n)
    smoothed = np.empty(n)
    path_mean[order] = path_m
    path_var[order] = path_v
    smoothed[order] = smooth_m
    return Dynamics(path_mean, path_var, still_m, still_v, move_m, move_v, drop, rise,
                    smoothed)  # fmt: skip
