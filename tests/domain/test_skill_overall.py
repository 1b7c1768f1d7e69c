"""Overall is what the task types show: the mean of the agent's shown skills at the fleet's
task types (one not done at its prediction), after a fit, after a filter step between fits
and as inactivity widens them, near the top of the scale too; its sd is the joint
posterior's, narrowed as the restriction to the scale narrows its task types."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import numpy as np
import pytest

from agentladder.domain.skill import (
    AgentSkill,
    FleetSkill,
    ModelChange,
    ScoreEvidence,
    SkillRules,
    apply_evidence,
    fit_observations,
    observations_of,
    skill_view,
    snapshot_of,
)
from agentladder.domain.skill.evidence import Evidence
from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.live import prior_at
from agentladder.domain.skill.overall import _combined, _parts_arrays, _parts_plain
from agentladder.domain.skill.state import OVERALL

RULES = SkillRules()
TYPES = ("extraction", "math", "reasoning", "writing")
QUALITY = {"top": 9.95, "high": 9.6, "mid": 6.0, "low": 3.0, "bottom": 0.3}
NOT_DONE = {("top", "writing"), ("mid", "math"), ("mid", "reasoning"), ("low", "writing")}
START = 1_000_000.0
DAY = 86_400.0


def _judged(seed: int = 1, scores: int = 12) -> list[Evidence]:
    """One judge (noise 1.0) scores each (agent, task type) done ``scores`` times, the
    scores clipped to 0-10 as a judge's are."""
    rng = random.Random(seed)
    out: list[Evidence] = []
    for agent, quality in QUALITY.items():
        for task_type in TYPES:
            if (agent, task_type) in NOT_DONE:
                continue
            for _ in range(scores):
                score = min(10.0, max(0.0, round(quality + rng.gauss(0.0, 1.0), 2)))
                out.append(
                    ScoreEvidence(key=f"j{len(out)}", at=START + len(out), agent_id=agent,
                                  task_type=task_type, score=score, judge="judge")
                )  # fmt: skip
    return out


def _fitted(
    events: list[Evidence], rules: SkillRules = RULES
) -> tuple[dict[str, AgentSkill], FleetSkill]:
    fit = fit_observations(observations_of(events), rules)
    snapshot = snapshot_of(fit, rules, len(events), len(events), 0.0)
    return dict(snapshot.agents), snapshot.fleet


def _types_of(state: AgentSkill, fleet: FleetSkill) -> list[str]:
    return sorted(set(fleet.levels) | set(state.types))


def _assert_overall_is_the_mean_shown(
    state: AgentSkill, fleet: FleetSkill, now: float, rules: SkillRules = RULES
) -> None:
    shown = [skill_view(state, fleet, t, now, rules).skill for t in _types_of(state, fleet)]
    overall = skill_view(state, fleet, None, now, rules)
    assert abs(overall.skill - statistics.fmean(shown)) <= 1e-9, (state.agent_id, overall, shown)
    assert 0.0 <= overall.low <= overall.skill <= overall.high <= 10.0
    assert overall.sd > 0.0


def test_after_a_fit_overall_is_the_mean_of_the_task_types_shown_near_the_top_too() -> None:
    """Every agent, some of whose task types are not done (those at their prediction):
    overall = mean of the shown task types within 1e-9, with bounds as scores and with a
    judge whose bounds are censored. With it the agent at 9.95 has latent skills past 10:
    restricting their mean afterwards (the rule before) read it well above what its task
    types show."""
    censoring = RULES.model_copy(update={"censored_judges": ("judge",)})
    now = START + 1_000.0
    for rules in (RULES, censoring):
        states, fleet = _fitted(_judged(), rules)
        assert sorted(fleet.levels) == list(TYPES)
        for state in states.values():
            _assert_overall_is_the_mean_shown(state, fleet, now, rules)
    top = states["top"]
    assert top.overall.mean > 10.0  # the latent mean is past the scale
    shown = [skill_view(top, fleet, t, now, censoring).skill for t in TYPES]
    before = on_scale(top.overall.mean, math.sqrt(top.overall.var), RULES.interval_z)[0]
    overall = skill_view(top, fleet, None, now, censoring)
    assert before - statistics.fmean(shown) > 0.1  # what the users saw: 9.90 against 9.29
    assert overall.skill == pytest.approx(statistics.fmean(shown), abs=1e-9)
    assert overall.high <= 10.0


def test_between_fits_a_step_keeps_overall_the_mean_of_the_task_types_shown() -> None:
    """A filter step at a task type the agent has done, at one it has not (its prediction
    replaced by its estimate), at one the fleet does not know yet (the mean over one more
    type), and a model change: overall stays the mean of the shown task types within 1e-9,
    the top agent's included."""
    states, fleet = _fitted(_judged())
    at = START + 2_000.0
    steps: list[Evidence] = [
        ScoreEvidence(key="s1", at=at, agent_id="top", task_type="math", score=10.0, judge="judge"),
        ScoreEvidence(key="s2", at=at + 1, agent_id="top", task_type="writing", score=9.5,
                      judge="judge"),
        ScoreEvidence(key="s3", at=at + 2, agent_id="mid", task_type="coding", score=7.0,
                      judge="judge"),
        ScoreEvidence(key="s4", at=at + 3, agent_id="low", task_type="math", score=1.0,
                      judge="judge"),
        ModelChange(key="m1", at=at + 4, agent_id="high", model_name="other"),
    ]  # fmt: skip
    for event in steps:
        states.update(apply_evidence(states, fleet, event, RULES).agents)
        for state in states.values():
            _assert_overall_is_the_mean_shown(state, fleet, at + 10.0)
    assert "writing" in states["top"].types
    assert _types_of(states["mid"], fleet) == sorted([*TYPES, "coding"])


def test_inactivity_widens_overall_with_its_task_types_and_keeps_it_their_mean() -> None:
    """Read 30 and 300 days after the evidence: each task type widens on its own, overall
    stays their mean shown and widens with them."""
    states, fleet = _fitted(_judged())
    for state in states.values():
        sds = []
        for days in (0.0, 30.0, 300.0):
            now = START + 1_000.0 + days * DAY
            _assert_overall_is_the_mean_shown(state, fleet, now)
            sds.append(skill_view(state, fleet, None, now, RULES).sd)
        assert sds == sorted(sds)
        assert sds[-1] > sds[0]


def test_away_from_the_ends_the_overall_sd_is_the_joint_posteriors() -> None:
    """The agent at 6 (no task type near 0 or 10): the overall's sd is that of the latent
    mean under the fit's joint posterior, within 0.1% (the restriction to the scale barely
    narrows its types); the one at 3, whose predicted type (3.0, sd 1.08) reaches 0,
    within 1%; the one at 9.6, every type near 10, narrower (its 10s censored: with
    bounds as scores its latent skills stay under 10)."""
    states, fleet = _fitted(_judged())
    censored, censored_fleet = _fitted(
        _judged(), RULES.model_copy(update={"censored_judges": ("judge",)})
    )
    now = START + 1_000.0
    for agent, within in (("mid", 1e-3), ("low", 1e-2)):
        state = states[agent]
        overall = skill_view(state, fleet, None, now, RULES)
        assert overall.sd == pytest.approx(math.sqrt(state.overall.var), rel=within)
    high = censored["high"]
    censoring = RULES.model_copy(update={"censored_judges": ("judge",)})
    view = skill_view(high, censored_fleet, None, now, censoring)
    assert view.sd < 0.95 * math.sqrt(high.overall.var)


def _joint_sd(events: list[Evidence], now: float) -> dict[str, tuple[float, float]]:
    """Per agent: the overall's sd, and the sd of the mean of its task types under the
    fit's joint covariance with each type narrowed by its own factor (its shown sd over
    its latent one): the reference the single factor approximates."""
    fit = fit_observations(observations_of(events), RULES)
    snapshot = snapshot_of(fit, RULES, len(events), len(events), 0.0)
    fleet = snapshot.fleet
    lay, sol, names = fit.lay, fit.solution, fit.obs.types
    out = {}
    for a, agent in enumerate(fit.obs.agents):
        state = snapshot.agents[agent]
        pairs = {int(lay.pair_type[p]): p for p in range(lay.pairs) if int(lay.pair_agent[p]) == a}
        combos = [  # each type's latent skill: its pair, or the ability plus the type's level
            ({pairs[t]: 1.0}, 0.0) if t in pairs
            else ({lay.q0 + a: 1.0, lay.l0 + t: 1.0}, fit.type_spread**2)
            for t in range(len(names))
        ]  # fmt: skip
        count = len(combos)
        cov = np.zeros((count, count))
        for i, j in itertools.product(range(count), range(count)):
            cov[i, j] = sum(
                wu * wv * float(sol.cross(np.array([u]), np.array([v]))[0])
                for u, wu in combos[i][0].items()
                for v, wv in combos[j][0].items()
            ) + (combos[i][1] if i == j else 0.0)
        factor = np.array([
            skill_view(state, fleet, t, now, RULES).sd
            / math.sqrt(prior_at(state, fleet, t, RULES).var)
            for t in names
        ])  # fmt: skip
        reference = math.sqrt(float(factor @ cov @ factor)) / count
        out[agent] = (skill_view(state, fleet, None, now, RULES).sd, reference)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_overall_sd_is_within_five_percent_of_the_joint_covariance_narrowed(
    seed: int,
) -> None:
    """Against the joint covariance with each task type narrowed by its own factor (0.3 to
    9.95, some types not done: their predictions share the agent's ability): within 5%
    (``benchmarks/bench_overall.py`` measured at most 1.6%, 0.4% on average, over 48
    agents at eight task types; exact where no type is narrowed)."""
    for agent, (sd, reference) in _joint_sd(_judged(seed), START + 1_000.0).items():
        assert sd == pytest.approx(reference, rel=0.05), agent


def test_the_history_ends_at_the_overall_shown() -> None:
    """Without drift (so that the moment read does not widen anything): the last overall
    point of an agent's history is the overall shown, after the fit, after a step and
    after a model change; the dashboard's chart draws the same overall as the table."""
    rules = SkillRules(drift_sd_per_day=0.0)
    states, fleet = _fitted(_judged(), rules)
    at = START + 2_000.0
    events: list[Evidence] = [
        ScoreEvidence(key="s1", at=at, agent_id="top", task_type="math", score=10.0, judge="judge"),
        ModelChange(key="m1", at=at + 1, agent_id="mid", model_name="other"),
    ]  # fmt: skip

    def last_overall(state: AgentSkill) -> tuple[float, float]:
        point = [p for p in state.history if p[1] == OVERALL][-1]
        return point[2], point[3]

    checked = list(states.values())
    for event in events:
        moved = apply_evidence(states, fleet, event, rules).agents
        states.update(moved)
        checked += list(moved.values())
    for state in checked:
        view = skill_view(state, fleet, None, at + 10.0, rules)
        assert last_overall(state) == pytest.approx((view.skill, view.sd), abs=1e-12)


def test_one_task_type_reads_overall_exactly_as_that_type_near_the_top_too() -> None:
    """A fleet of one task type: each agent's overall is its task type's estimate, the
    interval included (pressed against 10 at the top, against 0 at the bottom), now and a
    year later."""
    events: list[Evidence] = [
        e for e in _judged() if isinstance(e, ScoreEvidence) and e.task_type == "math"
    ]
    states, fleet = _fitted(events)
    for days in (0.0, 365.0):
        now = START + 1_000.0 + days * DAY
        for state in states.values():
            typed = skill_view(state, fleet, "math", now, RULES)
            overall = skill_view(state, fleet, None, now, RULES)
            for field in ("skill", "sd", "low", "high"):
                assert getattr(overall, field) == pytest.approx(getattr(typed, field), abs=1e-9)
    top = skill_view(states["top"], fleet, None, START + 1_000.0, RULES)
    assert top.high - top.skill < top.skill - top.low  # a short upper half against 10


def test_a_fleet_of_forty_task_types_reads_overall_as_the_mean_of_its_types_shown() -> None:
    """Forty task types drawn from (the types restricted to the scale as arrays, not one
    call each), each agent judged at a random half of them three times: overall = mean of
    the fleet's types shown within 1e-9, after the fit and after a step, the agent at 9.95
    included."""
    rng = random.Random(5)
    types = [f"type{i:02d}" for i in range(40)]
    events: list[Evidence] = []
    for agent, quality in QUALITY.items():
        for task_type in rng.sample(types, 20):
            for _ in range(3):
                score = min(10.0, max(0.0, round(quality + rng.gauss(0.0, 1.0), 2)))
                events.append(ScoreEvidence(key=f"j{len(events)}", at=START + len(events),
                                            agent_id=agent, task_type=task_type, score=score,
                                            judge="judge"))  # fmt: skip
    states, fleet = _fitted(events)
    assert len(fleet.levels) >= 30  # those some agent was judged at
    now = START + 1_000.0
    for state in states.values():
        _assert_overall_is_the_mean_shown(state, fleet, now)
    step = ScoreEvidence(key="s", at=now, agent_id="top", task_type=types[0], score=10.0,
                         judge="judge")  # fmt: skip
    states.update(apply_evidence(states, fleet, step, RULES).agents)
    _assert_overall_is_the_mean_shown(states["top"], fleet, now + 1.0)
    assert skill_view(states["top"], fleet, None, now, RULES).skill > 9.0


def test_a_few_task_types_in_plain_floats_agree_with_the_arrays() -> None:
    """Up to 16 task types are combined one at a time in plain floats, more on arrays: the
    two ways give the same parts within 1e-9 (``gauss.on_scale`` and ``on_scale_many``
    compute the normal tails each its own way), for estimates anywhere on or off the
    scale, pressed to an end, all but certain, and unshowable (a variance not a positive
    finite number, a centre not finite), and so the same overall."""
    rng = random.Random(11)
    odd = [(math.nan, 1.0), (5.0, math.nan), (5.0, 0.0), (5.0, -1.0), (math.inf, 1.0),
           (9.99, 1e-14), (-40.0, 0.01), (60.0, 4.0), (10.0, 1e300)]  # fmt: skip
    for trial in range(400):
        count = 1 + trial % 16
        pairs = [(rng.uniform(-5.0, 15.0), 10 ** rng.uniform(-6.0, 1.5)) for _ in range(count)]
        if trial % 3 == 0:
            pairs[rng.randrange(count)] = rng.choice(odd)
        mean, var = np.array([m for m, _ in pairs]), np.array([v for _, v in pairs])
        plain, arrays = _parts_plain(mean, var, RULES), _parts_arrays(mean, var, RULES)
        for one, other in zip(plain, arrays, strict=True):
            assert np.allclose(one, other, rtol=1e-9, atol=1e-12), (pairs, plain, arrays)
        total = rng.choice([math.nan, 0.0, rng.uniform(0.01, 4.0)])
        assert np.allclose(_combined(plain, total, RULES), _combined(arrays, total, RULES),
                           rtol=1e-9, atol=1e-12)  # fmt: skip
