"""The award fold builds each changed model once, without pydantic copies, validation or
dumps, and what it builds is what the validated models would hold (``domain/frozen.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from pydantic import BaseModel

from agentladder.domain.award import Award, apply_judgment
from agentladder.domain.frozen import built, replaced
from agentladder.domain.judgment import Judgment
from agentladder.domain.profile import AgentProfile, LifetimeStats, new_profile
from agentladder.services.oracle.models import JudgmentRequest, fingerprint, judgment_payload
from tests.domain.oracle_helpers import NOW, RULES
from tests.domain.test_oracle_properties import judgments
from tests.golden.oracle_sequence import sequence


@pytest.fixture
def pydantic_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the calls of pydantic's copy, construct, validate and dump methods."""
    calls: Counter[str] = Counter()

    def counting(name: str, original: Any) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            calls[name] += 1
            return original(*args, **kw)

        return call

    for name in ("model_copy", "model_dump", "model_dump_json"):
        monkeypatch.setattr(BaseModel, name, counting(name, getattr(BaseModel, name)))
    for name in ("model_construct", "model_validate"):
        original = BaseModel.__dict__[name].__func__
        monkeypatch.setattr(BaseModel, name, classmethod(counting(name, original)))
    return calls


def test_sixty_judgments_fold_without_a_pydantic_copy(pydantic_calls: Counter[str]) -> None:
    """60 judgments covering every XP rule (levels, achievements, streaks) fold with no
    ``model_copy``, ``model_construct``, ``model_validate`` or ``model_dump`` call."""
    items = sequence()
    profile = new_profile("gemini-2.0-flash")
    for item in items:
        profile = apply_judgment(profile, item, RULES, NOW).profile
    assert profile.stats.total_tasks == len(items)
    assert dict(pydantic_calls) == {}


@given(judgments())
def test_what_the_fold_builds_is_what_validation_gives(items: list[Judgment]) -> None:
    """Every folded profile and award equals (and dumps as) its validated copy, and the
    award's result JSON is its pydantic dump."""
    profile = new_profile("a1")
    for item in items:
        award = apply_judgment(profile, item, RULES, NOW)
        profile = award.profile
        again = AgentProfile.model_validate(profile.model_dump())
        assert again == profile
        assert again.model_dump_json() == profile.model_dump_json()
        assert Award.model_validate(award.model_dump(by_alias=True)) == award
        expected = award.model_dump(mode="json", exclude={"profile", "position"})
        assert award.result_json() == expected


def test_replaced_is_model_copy_with_an_update() -> None:
    """``replaced`` gives what ``model_copy(update=...)`` gives: equal, same JSON, same
    fields set; the original is unchanged."""
    stats = LifetimeStats(total_tasks=3)
    copied = stats.model_copy(update={"total_tasks": 4, "best_streak": 2})
    new = replaced(stats, total_tasks=4, best_streak=2)
    assert new == copied
    assert new.model_dump_json() == copied.model_dump_json()
    assert new.model_fields_set == copied.model_fields_set
    assert stats.total_tasks == 3
    made = built(LifetimeStats, **dict(copied))
    assert made == copied
    assert made.model_dump_json() == copied.model_dump_json()


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"judge": "gpt-4o", "history": True, "new_agent": True},
        {"observed_at": "2025-12-01T10:00:00+02:00", "complexity": "medium"},
        {"scale": "0-100", "score": 85, "output": "text"},
    ],
)
def test_the_payload_and_fingerprint_are_those_of_the_dump(extra: dict[str, Any]) -> None:
    """A request's stored payload and fingerprint read from its values equal those of
    its pydantic dump, with and without the optional fields."""
    request = JudgmentRequest.model_validate(
        {"agent_id": "a1", "contract_id": "c-1", "score": 7.5, "cost": 0.01, **extra}
    )
    judgment = request.judgment()
    absent = {n for n in ("judge", "observed_at") if getattr(judgment, n) is None}
    if not judgment.history:
        absent.add("history")
    assert judgment_payload(judgment) == judgment.model_dump(mode="json", exclude=absent)
    assert list(judgment_payload(judgment)) == list(judgment.model_dump(exclude=absent))
    leave = {"new_agent", "history"} | {
        n for n in ("judge", "observed_at", "scale") if getattr(request, n) is None
    }
    assert fingerprint(request) == fingerprint(request.model_dump(mode="json", exclude=leave))
