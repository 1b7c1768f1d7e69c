"""Callers' feedback counted as a bounded number of scores (``domain/skill/capped.py``)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.skill import SkillRules, fit_observations, observations_of, snapshot_of
from agentladder.domain.skill.capped import capped
from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.domain.skill.fit import FitResult
from agentladder.services.skill.evidence import judgment_evidence


def _evidence(scores: list[tuple[str, str, float]], judged: int = 6) -> list[ScoreEvidence]:
    """A judge's scores of three agents, then ``scores`` as (client, agent, score) feedback."""
    out = [
        judgment_evidence(agent, f"c-{agent}-{i}", "audit", q, q >= 5, 1e9 + i, judge="j")
        for agent, q in {"a": 8.0, "b": 5.0, "c": 3.0}.items()
        for i in range(judged)
    ]
    for i, (client, agent, score) in enumerate(scores):
        out.append(
            judgment_evidence(
                agent,
                f"gw-{i}:feedback",
                "audit",
                score,
                score >= 5,
                1e9 + 100 + i,
                judge=f"feedback:{client}",
                deferred=True,
            )
        )
    return out


def _kept(evidence: list[ScoreEvidence], most: int) -> Counter[tuple[str, str, float]]:
    obs = capped(observations_of(evidence), most)
    return Counter(
        (obs.sources[s], obs.pairs[p][0], float(v))
        for s, p, v in zip(obs.source.tolist(), obs.pair.tolist(), obs.value.tolist(), strict=True)
        if s >= 0
    )


def test_a_clients_scores_of_one_agent_count_at_most_the_cap_and_judges_are_untouched() -> None:
    """40 feedback scores of one agent by one client keep 5 rows; another client's and the
    judge's rows are all kept."""
    scores = [("evil", "c", 10.0)] * 40 + [("fair", "a", 8.0)] * 3
    kept = _kept(_evidence(scores), 5)
    assert kept[("judge:feedback:evil", "c", 10.0)] == 5
    assert kept[("judge:feedback:fair", "a", 8.0)] == 3
    assert sum(n for (source, _, _), n in kept.items() if source == "judge:j") == 18


def test_the_kept_scores_spread_over_the_values_given() -> None:
    """30 thumbs up and 10 down by one client keep both ends, in about their share."""
    scores = [("c1", "b", 10.0)] * 30 + [("c1", "b", 0.0)] * 10
    kept = _kept(_evidence(scores), 5)
    assert kept[("judge:feedback:c1", "b", 10.0)] == 4
    assert kept[("judge:feedback:c1", "b", 0.0)] == 1


@settings(derandomize=True, max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["x", "y"]),
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from([0.0, 3.0, 7.5, 10.0]),
        ),
        max_size=60,
    ),
    st.randoms(use_true_random=False),
    st.integers(min_value=1, max_value=8),
)
def test_which_scores_are_kept_does_not_depend_on_their_order(
    scores: list[tuple[str, str, float]], rng: random.Random, most: int
) -> None:
    """The same evidence in any order keeps the same rows, and never more than the cap
    per client and agent."""
    evidence = _evidence(scores)
    shuffled = list(evidence)
    rng.shuffle(shuffled)
    kept = _kept(evidence, most)
    assert kept == _kept(shuffled, most)
    per = Counter((source, agent) for (source, agent, _), n in kept.items() for _ in range(n))
    assert all(n <= most for (source, _), n in per.items() if source.startswith("judge:feedback"))


def test_forty_thumbs_up_do_not_lift_an_agent_its_judge_scores_low() -> None:
    """The fit of a judge's scores plus one client's 40 thumbs up of the agent the judge
    scores 3: the agent's estimate stays within its interval without them; with no cap it
    would not (the cap is what holds it)."""
    rules = SkillRules()
    alone = fit_observations(observations_of(_evidence([], judged=8)), rules)
    flooded = _evidence([("evil", "c", 10.0)] * 40, judged=8)
    capped_fit = fit_observations(observations_of(flooded), rules)
    uncapped = fit_observations(observations_of(flooded), SkillRules(feedback_scores=10_000))

    def estimate(fit: FitResult) -> tuple[float, float]:
        found = snapshot_of(fit, rules, 1, 1, 1e9 + 1000).agents["c"].types["audit"]
        return found.mean, found.var**0.5

    base, sd = estimate(alone)
    assert abs(estimate(capped_fit)[0] - base) <= 1.96 * sd
    assert abs(estimate(uncapped)[0] - base) > 1.96 * sd
