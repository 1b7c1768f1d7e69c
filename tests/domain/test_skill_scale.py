"""The skill on the score's own scale (docs/skill.md, "The scale"): honest judges' fleets
read what their judges give; a new or loud source does not take the scale; reference
judges hold it; a bound is a score; judges that cannot be told apart keep their weight."""

from __future__ import annotations

import random
import statistics

import pytest

from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evaluation,
    Evidence,
    ScoreEvidence,
)
from agentladder.domain.skill.rules import SkillRules
from tests.domain.skill_helpers import fold

NOW = 1_100_000.0
RULES = SkillRules()
SIX = {"a9": 9.0, "a85": 8.5, "a7": 7.0, "a6": 6.0, "a5": 5.0, "a4": 4.0}


def _judged(quality: dict[str, float], judges: dict[str, float], count: int, noise: float,
            seed: int, *, at: float = 1_000_000.0) -> list[Evidence]:  # fmt: skip
    """Every judge (name: leniency) scores every agent ``count`` times."""
    rng = random.Random(seed)
    out: list[Evidence] = []
    for judge, lean in judges.items():
        for agent, q in quality.items():
            for k in range(count):
                score = min(10.0, max(0.0, q + lean + rng.gauss(0.0, noise)))
                out.append(ScoreEvidence(
                    key=f"judgment:{agent}:{judge}-{k}", at=at + k, agent_id=agent,
                    task_type="qa", score=round(score, 3), judge=judge,
                ))  # fmt: skip
    return out


def _six(seed: int) -> list[Evidence]:
    """30 deliberations of all six, every proposal scored by its five peers (noise 0.3)."""
    rng = random.Random(seed)
    out: list[Evidence] = []
    for d in range(30):
        scores = tuple(
            Evaluation(evaluator=e, author=a, round=1,
                       score=round(min(10.0, max(0.0, q + rng.gauss(0.0, 0.3))), 3))
            for a, q in SIX.items() for e in SIX if e != a
        )  # fmt: skip
        out.append(DeliberationEvidence(key=f"deliberation:d{d}", at=1_000_000.0 + 60.0 * d,
                                        task_type="qa", agents=tuple(SIX),
                                        evaluations=scores))  # fmt: skip
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_honest_peers_read_within_one_sd_of_their_quality_fitted_and_between_fits(
    seed: int,
) -> None:
    """Six agents of quality 9 to 4, 30 deliberations of all six, every proposal scored by
    its five peers with noise 0.3: each skill is within one sd of its quality after the
    fit (where the agent of 7 clears 6.5 by its 95% interval), and right after the
    reports, before any fit (the filter steps, from the priors: 0.4 low before)."""
    events = _six(seed)
    fitted, fleet = fold(events)
    live, empty = fold(events, RULES, {}, None)
    for states, board in ((fitted, fleet), (live, empty)):
        for agent, quality in SIX.items():
            view = skill_view(states[agent], board, "qa", NOW, RULES)
            assert abs(view.skill - quality) <= view.sd, (agent, view)
    assert skill_view(fitted["a7"], fleet, "qa", NOW, RULES).low > 6.5


def test_a_loud_new_judge_does_not_take_the_scale() -> None:
    """Five judges (leniencies -0.4 to 0.4) score eight agents 30 times each; a new judge
    then gives one agent of quality 3 a thousand 10s. That agent stays within 1.5 of 3 (its
    sd never 0), and the other agents move by less than 0.2: volume does not buy the
    scale."""
    quality = {f"q{i}": 3.0 + 0.7 * i for i in range(8)}
    judges = {"j1": -0.4, "j2": -0.2, "j3": 0.0, "j4": 0.2, "j5": 0.4}
    base = _judged(quality, judges, 30, 0.8, seed=3)
    loud = [
        ScoreEvidence(key=f"judgment:q0:loud-{k}", at=1_000_000.0 + k, agent_id="q0",
                      task_type="qa", score=10.0, judge="loud")
        for k in range(1000)
    ]  # fmt: skip
    before, before_fleet = fold(base)
    after, after_fleet = fold([*base, *loud])
    target = skill_view(after["q0"], after_fleet, "qa", NOW, RULES)
    assert abs(target.skill - 3.0) < 1.5, target
    assert target.sd >= RULES.sd_floor
    for agent in quality:
        if agent == "q0":
            continue
        was = skill_view(before[agent], before_fleet, "qa", NOW, RULES).skill
        now = skill_view(after[agent], after_fleet, "qa", NOW, RULES).skill
        assert abs(now - was) < 0.2, (agent, was, now)


def test_reference_judges_hold_the_scale() -> None:
    """A lenient judge (+1.5) with four times the evidence of the reference judge: with
    ``reference_judges`` naming the reference, every skill reads the reference judge's
    scale (within 0.15 of the quality), and no anchor error is added."""
    quality = {f"q{i}": 2.0 + i for i in range(7)}
    evidence = [*_judged(quality, {"gold": 0.0}, 10, 0.5, seed=4),
                *_judged(quality, {"lenient": 1.5}, 40, 0.5, seed=5)]  # fmt: skip
    rules = RULES.model_copy(update={"reference_judges": ("gold",)})
    states, fleet = fold(evidence, rules)
    for agent, q in quality.items():
        assert abs(states[agent].types["qa"].mean - q) < 0.15, agent
    assert fleet.anchor_var("qa") == 0.0
    lenient = fleet.sources["judge:lenient"]
    assert lenient.bias_mean == pytest.approx(1.5, abs=0.15)


def test_a_ten_on_a_closed_scale_is_ten() -> None:
    """An agent scored 10 in 60% of its judgments and 8 in the rest reads their mean, 9.2,
    within its interval (a bound is a score); with its judge named in ``censored_judges``
    the 10s read "10 or beyond" and the estimate is higher."""
    rng = random.Random(6)
    evidence: list[Evidence] = []
    for agent, share in (("top", 0.6), ("mid", 0.0)):
        for k in range(100):
            score = 10.0 if rng.random() < share else (8.0 if agent == "top" else 6.0)
            evidence.append(ScoreEvidence(key=f"judgment:{agent}:{k}", at=1_000_000.0 + k,
                                          agent_id=agent, task_type="qa", score=score,
                                          judge="rubric"))  # fmt: skip
    mean = statistics.fmean(e.score for e in evidence if isinstance(e, ScoreEvidence)
                            and e.agent_id == "top" and e.score is not None)  # fmt: skip
    states, fleet = fold(evidence)
    view = skill_view(states["top"], fleet, "qa", NOW, RULES)
    assert view.low <= mean <= view.high, (mean, view)
    censoring = RULES.model_copy(update={"censored_judges": ("rubric",)})
    beyond, _ = fold(evidence, censoring)
    assert beyond["top"].types["qa"].mean > states["top"].types["qa"].mean + 0.1


def test_two_judges_of_two_close_agents_keep_their_weight() -> None:
    """Two judges (leniencies +0.3 and -0.3, noise 2 and 2.5, rounded scores) of two agents
    0.32 apart, a thousand judgments each: both judges keep their honesty and the agents
    are read apart in the right order, not both at the prior."""
    rng = random.Random(7)
    evidence: list[Evidence] = []
    for agent, quality in (("m1", 6.64), ("m2", 6.32)):
        for judge, lean, noise in (("ja", 0.3, 2.0), ("jb", -0.3, 2.5)):
            for k in range(1023):
                score = round(min(10.0, max(0.0, quality + lean + rng.gauss(0.0, noise))))
                key = f"judgment:{agent}:{judge}{k}"
                at = 1_000_000.0 + k
                evidence.append(ScoreEvidence(key=key, at=at, agent_id=agent, task_type="qa",
                                              score=score, judge=judge))  # fmt: skip
    states, fleet = fold(evidence)
    for name in ("judge:ja", "judge:jb"):
        assert fleet.sources[name].honesty > 0.5, fleet.sources[name]
    m1, m2 = states["m1"].types["qa"], states["m2"].types["qa"]
    assert m1.mean > m2.mean
    assert abs(m1.mean - 6.64) < 0.3
    assert abs(m2.mean - 6.32) < 0.3
