"""Properties of the fit that no name or arrival decides (docs/skill.md): the same
judgments under other contract ids, in another order, under a judge split in two names,
from a judge of two agents only; evidence of one moment is never a change; history of a
fixed model does not drift with the calendar."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.evidence import Evidence, ScoreEvidence
from agentladder.domain.skill.rules import SkillRules
from tests.domain.skill_helpers import fold

RULES = SkillRules()
DAY = 86_400.0
START = 1_000_000.0
QUALITY = {"a": 8.0, "b": 6.5, "c": 5.0, "d": 3.5}
JUDGES = {"j1": -0.5, "j2": 0.0, "j3": 0.5}


def _judgments(seed: int, count: int, *, spread_days: float = 0.0, history: bool = False,
               judges: dict[str, float] | None = None) -> list[Evidence]:  # fmt: skip
    """Every judge scores every agent ``count`` times (noise 1.0, two decimals); at one
    moment, or spread over ``spread_days``; deferred (history) when asked."""
    rng, when = random.Random(seed), random.Random(seed + 1)  # the times apart: same scores
    out: list[Evidence] = []
    for judge, lean in (judges or JUDGES).items():
        for agent, quality in QUALITY.items():
            for k in range(count):
                at = START + when.uniform(0.0, spread_days * DAY)
                score = round(min(10.0, max(0.0, quality + lean + rng.gauss(0.0, 1.0))), 2)
                out.append(ScoreEvidence(key=f"judgment:{agent}:{judge}-{k}", at=at,
                                         agent_id=agent, task_type="qa", score=score,
                                         judge=judge, deferred=history))  # fmt: skip
    return out


def _skills(events: list[Evidence], rules: SkillRules = RULES,
            now: float = START) -> dict[str, tuple[float, float]]:  # fmt: skip
    states, fleet = fold(events, rules)
    out = {}
    for agent in QUALITY:
        view = skill_view(states[agent], fleet, "qa", now, rules)
        out[agent] = (view.skill, view.sd)
    return out


def _relabelled(events: list[Evidence], salt: str) -> list[Evidence]:
    """The same judgments under other contract ids (a digest of the old, salted)."""
    out: list[Evidence] = []
    for e in events:
        assert isinstance(e, ScoreEvidence)
        digest = hashlib.sha1(f"{salt}{e.key}".encode()).hexdigest()
        out.append(e.model_copy(update={"key": f"judgment:{e.agent_id}:{digest}"}))
    return out


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), salt=st.text(max_size=4), spread=st.sampled_from([0.0, 3.0]))
def test_other_contract_ids_and_orders_give_the_same_skills(
    seed: int, salt: str, spread: float
) -> None:
    """The same judgments (of one moment, or over three days) under other contract ids and
    in a shuffled order give the same skills and sds, to 1e-9."""
    events = _judgments(seed, 8, spread_days=spread)
    want = _skills(events)
    other = _relabelled(events, salt)
    random.Random(seed).shuffle(other)
    got = _skills(other)
    for agent, (skill, sd) in want.items():
        assert abs(got[agent][0] - skill) <= 1e-9
        assert abs(got[agent][1] - sd) <= 1e-9


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), count=st.integers(5, 40))
def test_evidence_of_one_moment_is_never_a_change(seed: int, count: int) -> None:
    """Judgments all of one moment leave the change detector's sums at 0 for every agent,
    whatever their keys' order."""
    states, _ = fold(_judgments(seed, count))
    for agent in QUALITY:
        estimate = states[agent].types["qa"]
        assert estimate.drop == 0.0
        assert estimate.rise == 0.0


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_a_judge_split_in_two_names_moves_no_skill_beyond_its_sd(seed: int) -> None:
    """One judge's judgments told under two names (half each, at random) read every agent
    within one sd of the estimate under one name."""
    events = _judgments(seed, 12)
    rng = random.Random(seed)
    split: list[Evidence] = []
    for e in events:
        assert isinstance(e, ScoreEvidence)
        twin = e.judge == "j2" and rng.random() < 0.5
        split.append(e.model_copy(update={"judge": "j2-twin"}) if twin else e)
    whole, parted = _skills(events), _skills(split)
    for agent, (skill, sd) in whole.items():
        assert abs(parted[agent][0] - skill) <= sd, (agent, whole, parted)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000))
def test_a_judge_of_two_agents_only_keeps_its_weight(seed: int) -> None:
    """A judge that scored two agents only (and honestly) is not discarded: it stays
    honest and its scores move those agents (a skill with them differs from one without)."""
    events = _judgments(seed, 10)
    rng = random.Random(seed + 1)
    pair = [
        ScoreEvidence(key=f"judgment:{agent}:pair-{k}", at=START, agent_id=agent,
                      task_type="qa", score=round(QUALITY[agent] + rng.gauss(0.0, 0.5), 2),
                      judge="pair")
        for agent in ("a", "d") for k in range(30)
    ]  # fmt: skip
    states, fleet = fold([*events, *pair])
    assert fleet.sources["judge:pair"].honesty > 0.5
    alone = _skills(events)
    both = {a: states[a].types["qa"].var for a in ("a", "d")}
    assert all(both[a] < alone[a][1] ** 2 for a in ("a", "d"))


def test_history_of_a_fixed_model_does_not_drift_with_the_calendar() -> None:
    """Judgments imported as history, spread over 200 days, read as sure as the same
    judgments of one moment, and reading them 300 days later widens nothing; the same
    judgments arriving live over 200 days are less sure (their skill drifted), and widen
    with the days since."""
    spread = _judgments(3, 10, spread_days=200.0, history=True)
    moment = _judgments(3, 10, history=True)
    later = START + 500 * DAY
    for agent, (skill, sd) in _skills(spread).items():
        assert abs(_skills(moment)[agent][1] - sd) < 0.01
        assert abs(_skills(spread, now=later)[agent][1] - sd) < 1e-9
        assert abs(_skills(spread, now=later)[agent][0] - skill) < 1e-9
    live = _judgments(3, 10, spread_days=200.0)
    for agent, (_, sd) in _skills(live, now=START + 200 * DAY).items():
        assert sd > _skills(spread)[agent][1]
        assert _skills(live, now=later)[agent][1] > sd
