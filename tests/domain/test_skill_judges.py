"""``source_records``: every source of scores the fit knows, most evidence first, with its
weight and a warning; the gateway's clients one source where their names are not shown."""

from __future__ import annotations

import math

import pytest

from agentladder.domain.skill.judges import (
    ALONE,
    FEEDBACK,
    LITTLE_WEIGHT,
    SourceRecord,
    source_records,
)
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import FleetSkill, SourceState, SourceType, new_skill, replace

RULES = SkillRules()


def source(
    n: int, honesty: float, *types: str, bias: float = 0.0, noise: float = 1.0
) -> SourceState:
    """A source of ``n`` scores spread evenly over ``types``."""
    each = n // len(types)
    return SourceState(
        bias_mean=bias, bias_var=0.04, noise_var=noise**2, honesty=honesty, n=n,
        types={t: SourceType(bias_mean=bias, bias_var=0.04, noise_var=noise**2, n=each)
               for t in types},
    )  # fmt: skip


FLEET = FleetSkill(
    sources={
        "judge:gpt": source(40, 0.95, "qa", "code", bias=0.5),
        "judge:liar": source(30, 0.2, "qa"),
        "judge:solo": source(8, 0.9, "math"),
        "judge:feedback:team-a": source(4, 1.0, "qa", bias=1.0, noise=2.0),
        "judge:feedback:team-b": source(12, 0.6, "qa", bias=-1.0, noise=1.0),
        "aggregate": source(6, 0.9, "code"),
    },
    scales={
        "qa": (("judge:gpt", 0.6), ("judge:feedback:team-a", 0.25), ("judge:feedback:team-b", 0.1)),
        "code": (("judge:gpt", 0.7), ("aggregate", 0.3)),
        "math": (("judge:solo", 1.0),),
    },
)
PEER = replace(new_skill("ada", RULES), evaluator=source(20, 0.9, "code"), model_changes=1)
SILENT = new_skill("bob", RULES)  # never evaluated: not a source


def by_name(records: list[SourceRecord]) -> dict[str, SourceRecord]:
    return {r.source: r for r in records}


def test_every_source_most_evidence_first_with_its_weight() -> None:
    """Judges, the aggregate and an agent as evaluator in its current model (``#1`` after
    one model change); one that never evaluated is not listed. A task type's share is the
    scale's; overall, their mean over the task types with a scale."""
    records = source_records(FLEET, [PEER, SILENT], clients=True)
    assert [r.source for r in records] == [
        "judge:gpt", "judge:liar", "agent:ada#1", "judge:feedback:team-b", "judge:solo",
        "aggregate", "judge:feedback:team-a",
    ]  # fmt: skip
    found = by_name(records)
    gpt = found["judge:gpt"]
    assert (gpt.observations, gpt.leniency, gpt.leniency_sd, gpt.noise_sd, gpt.honesty) == (
        40, 0.5, 0.2, 1.0, 0.95,
    )  # fmt: skip
    assert gpt.share == pytest.approx((0.6 + 0.7) / 3, abs=1e-4)
    assert [(t.task_type, t.share, t.observations) for t in gpt.task_types] == [
        ("code", 0.7, 20), ("qa", 0.6, 20),
    ]  # fmt: skip
    assert found["agent:ada#1"].task_types[0].share is None  # below the three recorded
    assert found["agent:ada#1"].share == 0.0


def test_the_warnings() -> None:
    """Honesty below 0.5: little weight; the only source at every task type it scores:
    alone (its honesty is not judged then); the others none."""
    found = by_name(source_records(FLEET, [PEER], clients=True))
    assert found["judge:liar"].warning == LITTLE_WEIGHT
    assert found["judge:solo"].warning == ALONE
    assert {r.warning for n, r in found.items() if n not in ("judge:liar", "judge:solo")} == {None}


def test_the_clients_are_one_source_where_their_names_are_not_shown() -> None:
    """Without the clients' names, one ``judge:feedback``: counts and shares summed,
    leniency, noise and honesty averaged weighed by evidence; no client's name anywhere."""
    records = source_records(FLEET, [PEER], clients=False)
    assert not any("team" in r.source for r in records)
    feedback = by_name(records)[FEEDBACK]
    assert feedback.source == "judge:feedback"
    assert feedback.observations == 16
    assert feedback.leniency == pytest.approx((4 * 1.0 + 12 * -1.0) / 16)
    assert feedback.noise_sd == pytest.approx(math.sqrt((4 * 4.0 + 12 * 1.0) / 16), abs=1e-4)
    assert feedback.honesty == pytest.approx((4 * 1.0 + 12 * 0.6) / 16)
    assert [(t.task_type, t.share, t.observations) for t in feedback.task_types] == [
        ("qa", 0.35, 16)
    ]
    assert feedback.share == pytest.approx(0.35 / 3, abs=1e-4)
    assert feedback.warning is None


def test_a_lone_client_is_alone_even_when_named_as_the_feedback() -> None:
    """Feedback alone at its task type: alone, named or not."""
    fleet = FleetSkill(
        sources={"judge:feedback:team-a": source(5, 0.9, "qa")},
        scales={"qa": (("judge:feedback:team-a", 1.0),)},
    )
    for clients in (True, False):
        (record,) = source_records(fleet, [], clients=clients)
        assert record.warning == ALONE


def test_before_the_first_fit_nothing_is_listed() -> None:
    """An empty fleet's state (no fit yet) and agents that never evaluated: no source."""
    assert source_records(FleetSkill(), [SILENT], clients=True) == []
