"""Between fits: twelve agents with lenient and harsh evaluators and two colluders, 150
deliberations reported with their raw scores, read before any fit (the filter steps) and
after it, against the agents' true overall quality; beside the plain mean of the scores
each agent was given (docs/skill.md, "Between two fits")."""

from __future__ import annotations

import random
import statistics

from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.fit import fit_observations
from agentladder.domain.skill.live import apply_evidence
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.snapshot import snapshot_of
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.skill.table import observations_of
from benchmarks.fidelity_fleet import Scenario, make_fleet, stream
from benchmarks.fidelity_methods import kendall_tau
from benchmarks.fidelity_peers import sim_evidence

__all__ = ["TWELVE", "between_fits"]

TWELVE = Scenario("12 agents, leniency ±1, 2 colluders", agents=12, noise=0.5, leniency=1.0,
                  colluders=2)  # fmt: skip
READ_AT = 2_000_000.0


def between_fits(seed: int, rules: SkillRules, count: int = 150) -> dict[str, float]:
    """Kendall's τ against the true overall quality: the live board, the plain means, the
    fitted board."""
    rng = random.Random(seed)
    fleet = make_fleet(TWELVE, rng)
    sims = stream(TWELVE, fleet, count, rng)
    evidence = sim_evidence(sims)
    truth = {a: fleet.overall(a) for a in fleet.agents}
    states: dict[str, AgentSkill] = {}
    empty = FleetSkill()
    for item in evidence:
        states.update(apply_evidence(states, empty, item, rules).agents)
    snapshot = snapshot_of(fit_observations(observations_of(evidence), rules), rules,
                           len(evidence), len(evidence), 0.0)  # fmt: skip
    given: dict[str, list[float]] = {}
    for sim in sims:
        for _, author, _, score in sim.scores:
            given.setdefault(author, []).append(score)
    plain = {a: statistics.fmean(v) for a, v in given.items()}
    live = {a: skill_view(states[a], empty, None, READ_AT, rules).skill for a in states}
    fitted = {a: skill_view(s, snapshot.fleet, None, READ_AT, rules).skill
              for a, s in snapshot.agents.items()}  # fmt: skip
    return {
        "live": kendall_tau(live, truth),
        "plain": kendall_tau(plain, truth),
        "fit": kendall_tau(fitted, truth),
    }
