"""The fit's time chains: each observation's event as one message per (agent, task type),
built from the system's solution in each round of the fit and run through
``chain.run_chains``. What they give back: how far each event's skill lay from the
system's one value (so that a score after a real change is not taken for an outlier), and
the correction of each pair's estimate for time (``snapshot.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.blocks import slices
from agentladder.domain.skill.chain import Chains, Run, chains_of, run_chains
from agentladder.domain.skill.observations import Index, Observations
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.terms import Layout, Solution

__all__ = ["Inputs", "MessageLayout", "deviation", "dynamics", "message_layout"]

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
    live: npt.NDArray[np.bool_]
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


def message_layout(obs: Observations, lay: Layout, rules: SkillRules) -> MessageLayout:
    """The messages of the evidence and their chains: one message per pair and moment
    (``at``), whatever events it came in, so that evidence of one moment is one step of the
    chains (never a change by itself) and no name of an event (a contract id, a key)
    orders anything; the chains are ordered by pair and time, all distinct."""
    agents = obs.agents
    pair_agent = [agents[int(a)] for a in lay.pair_agent]
    by_time = np.lexsort((obs.at, obs.pair))
    p, t = obs.pair[by_time], obs.at[by_time]
    new = np.ones(len(by_time), dtype=bool)
    new[1:] = (p[1:] != p[:-1]) | (t[1:] != t[:-1])
    if new.all():  # each observation its own message
        del by_time, p, t, new
        live = ~obs.history
        chains, order = chains_of(obs.pair, obs.at, live, pair_agent, obs.changes, lay.pairs,
                                  rules)  # fmt: skip
        return MessageLayout(None, obs.pair, obs.at, live, chains, order)
    message = np.cumsum(new) - 1
    of = np.empty(len(obs), dtype=np.int32)
    of[by_time] = message
    pair = p[new].astype(np.int32)
    at = t[new]
    live = np.bincount(of, weights=~obs.history, minlength=len(pair)) > 0
    chains, chain_order = chains_of(pair, at, live, pair_agent, obs.changes, lay.pairs, rules)
    return MessageLayout(of, pair, at, live, chains, chain_order)


Inputs = Callable[[npt.NDArray[np.integer[Any]] | slice], tuple[Floats, Floats]]
"""The chains' weight and value of the observations at an index (what each says, time and
all), made when asked for: a block at a time where each observation is its own message."""


def _said(obs: Observations, lay: Layout, sol: Solution, at: npt.NDArray[np.integer[Any]] | slice,
          inputs: Inputs) -> tuple[Floats, Floats, Floats]:  # fmt: skip
    """The observations' weights, their values less their sources' leniencies and their
    deliberation's offset, and that offset's variance."""
    weight, value = inputs(at)
    mean = sol.mean
    scored = obs.source[at] >= 0
    cols = lay.cols[at]
    lenient = np.where(
        scored, mean[np.maximum(cols[:, 1], 0)] + mean[np.maximum(cols[:, 2], 0)], 0.0
    )
    group = obs.group[at]
    grouped = group >= 0
    gk = np.where(grouped, group, 0)
    offset = np.where(grouped, sol.offset[gk], 0.0) if lay.groups else np.zeros(len(weight))
    spread = np.where(grouped, sol.offset_var[gk], 0.0) if lay.groups else np.zeros(len(weight))
    return weight, value - lenient - offset, spread


def _message(total: Floats, sums: Floats, share: Floats) -> tuple[Floats, Floats]:
    """A message's mean and variance from its observations' summed weights, weighted values
    and offset variance."""
    m_mean = np.where(total > 0.0, sums / np.where(total > 0.0, total, 1.0), 0.0)
    m_var = np.where(total > 0.0, 1.0 / np.where(total > 0.0, total, 1.0) + share, _NOTHING)
    return m_mean, m_var


def _chain_inputs(obs: Observations, lay: Layout, msg: MessageLayout, sol: Solution,
                  inputs: Inputs) -> tuple[Floats, Floats]:  # fmt: skip
    """What each message says of its pair's skill alone (mean, variance), in chain order:
    its observations' values less their sources' leniencies and their deliberation's
    offset, weighed (the offset's uncertainty added, since the event's scores share it)."""
    n = len(msg.pair)
    if msg.of is None:  # a message per observation: a block of chain positions at a time
        chain_mean, chain_var = np.empty(n), np.empty(n)
        for part in slices(n):
            weight, said, spread = _said(obs, lay, sol, msg.order[part], inputs)
            # a sum of one, as ``MessageLayout.summed`` makes it
            chain_mean[part], chain_var[part] = _message(weight + 0.0, weight * said + 0.0,
                                                         spread + 0.0)  # fmt: skip
        return chain_mean, chain_var
    weight, said, spread = _said(obs, lay, sol, slice(None), inputs)
    share = msg.summed(spread) / np.maximum(np.bincount(msg.of, minlength=n), 1)
    m_mean, m_var = _message(msg.summed(weight), msg.summed(weight * said), share)
    return m_mean[msg.order], m_var[msg.order]


def _starts(lay: Layout, sol: Solution, type_spread: float) -> tuple[Floats, Floats]:
    """Each pair's chains start from its pooled prior: its agent's ability and its level."""
    q = lay.q0 + lay.pair_agent
    lv = lay.l0 + lay.pair_type
    return sol.mean[q] + sol.mean[lv], type_spread + sol.var[q] + sol.var[lv]


def deviation(obs: Observations, lay: Layout, msg: MessageLayout, sol: Solution,
              inputs: Inputs, type_spread: float, rules: SkillRules) -> Floats:  # fmt: skip
    """Per observation, how far the skill at its message's time (the moving chain smoothed
    over all the pair's messages) lies from the pair's one value (the still filter's end);
    0 for every message of a pair whose skill did not move. Without the rest of the run's
    arrays (a round before the last needs only this): the chains run in place on their
    inputs."""
    chain_mean, chain_var = _chain_inputs(obs, lay, msg, sol, inputs)
    start_mean, start_var = _starts(lay, sol, type_spread)
    run = run_chains(msg.chains, start_mean, start_var, chain_mean, chain_var, rules)
    del chain_var  # the filtered variances: the smoother's, done
    out = np.empty(len(msg.pair))
    pair, order = msg.chains.pair, msg.order
    for part in slices(len(out)):
        out[order[part]] = run.smoothed[part] - run.still_mean[pair[part]]
    return msg.observed(out)


def dynamics(obs: Observations, lay: Layout, msg: MessageLayout, sol: Solution,
             inputs: Inputs, type_spread: float, rules: SkillRules) -> Run:  # fmt: skip
    """The chains over what each event says of its pair's skill alone (``_chain_inputs``),
    their paths kept (``Run.path_mean``, ``Run.path_var``)."""
    chain_mean, chain_var = _chain_inputs(obs, lay, msg, sol, inputs)
    start_mean, start_var = _starts(lay, sol, type_spread)
    return run_chains(msg.chains, start_mean, start_var, chain_mean, chain_var, rules, path=True)
