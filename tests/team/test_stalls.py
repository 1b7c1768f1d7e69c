"""A deliberation's wall time is bounded by what it waits for, served for real.

An agent whose provider always answers 429 with ``Retry-After: 30`` once made a
three-agent, one-round deliberation take 210 s instead of 3 s: every retry slept for the
Retry-After, each with a fresh deadline. Now a Retry-After longer than what is left of
the call's deadline, or than ``orchestrator.max_retry_wait_s``, ends the call at once;
the agent cools down; a later deliberation naming it while it is down leaves it out
(or is refused when too few remain); the page says what a running call waits for.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.team.conftest import Team
from tests.team.provider import TeamProvider

ASKED_S = 600
"""The Retry-After ``limited`` answers with here: far longer than the 120 s a test waits
for a deliberation to end, so a deliberation that waited for it would never be seen ended
(and shorter than ``routing.max_cooldown_s``, 900 s, so the cooldown is the whole of it)."""


def proposal_of(record: dict[str, Any], agent: str, round_: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = next(
        p for p in record["rounds"][round_]["proposals"] if p["agent_id"] == agent
    )
    return found


def assert_ended_before_the_retry_after(team: Team, record: dict[str, Any]) -> None:
    """``limited`` is down for exactly its Retry-After, from its 429, which was answered
    while the deliberation ran; the deliberation ended before that time: nothing waited
    for it (events on the server's clock, not a wall time measured here)."""
    agent = team.get("/agents/limited").json()
    assert agent["health"]["status"] == "down"
    cooldown = agent["cooldown"]
    assert cooldown["until"] - cooldown["since"] == pytest.approx(ASKED_S)
    assert record["started_at"] <= cooldown["since"] <= record["finished_at"]
    assert record["finished_at"] < cooldown["until"]


def test_a_rate_limited_agent_costs_a_named_deliberation_no_wait(
    start_team: Callable[..., Team], provider_settings: TeamProvider
) -> None:
    """Three agents, one round, a 1000 s call deadline (room for the wait) and the default
    ``orchestrator.max_retry_wait_s`` (5 s): ``limited`` answers 429 with a Retry-After of
    600 s, longer than a call waits for one: it is asked once, the call ends at once,
    saying so, its evaluations are not asked, the deliberation completes before the
    Retry-After's end, and its health is down until then. (That a refused call ends at
    once, to the loop's exact time: tests/services/test_call_deadline.py, on virtual
    time.)"""
    provider_settings.retry_after["limited"] = str(ASKED_S)
    team = start_team(orchestrator={"timeout_s": 1000})
    before = provider_settings.asked("limited")
    record = team.finished(team.deliberate(["steady", "stream", "limited"], "quick"))
    assert record["status"] == "completed"
    assert provider_settings.asked("limited") - before == 1  # no retry, no evaluation asked
    mine = proposal_of(record, "limited")
    assert mine["attempts"] == 1
    assert "429" in mine["error"]
    asked = f"not retried: its provider asked not to be called for {ASKED_S} s more"
    error = mine["error"]
    assert asked in error
    assert "than a call waits for a provider (5 s, orchestrator.max_retry_wait_s)" in error
    skipped = [
        e for p in record["rounds"][0]["proposals"] for e in p["evaluations"]
        if e["evaluator"] == "limited"
    ]  # fmt: skip
    assert len(skipped) == 2
    assert all(e["error"].startswith("not asked: its provider asked") for e in skipped)
    assert_ended_before_the_retry_after(team, record)


def test_a_six_agent_standard_deliberation_is_bounded_too(
    start_team: Callable[..., Team], provider_settings: TeamProvider
) -> None:
    """The six agents, two rounds (the team's configuration: a 10 s call deadline), the
    Retry-After 600 s: ``limited`` is asked in round 1 only (down in round 2, its calls not
    made), and the deliberation completes before the Retry-After's end. ``slow`` answers
    after 0.5 s here, not 2 s: its wait is not what this test is about, and its calls one
    after the other took about 8 s of the test's 11."""
    provider_settings.retry_after["limited"] = str(ASKED_S)
    provider_settings.delays["slow"] = 0.5
    five = ["nokey", "garbage", "slow", "steady", "stream"]
    team = start_team()
    record = team.finished(team.deliberate([*five, "limited"], "standard"))
    assert record["status"] == "completed"
    assert proposal_of(record, "limited", 0)["attempts"] == 1
    later = proposal_of(record, "limited", 1)
    assert later["attempts"] == 0
    assert later["error"].startswith("not asked: its provider asked not to be called")
    assert record["result"]["agent_id"] in ("slow", "steady", "stream")
    assert_ended_before_the_retry_after(team, record)


def test_the_page_says_what_each_running_call_waits_for(
    start_team: Callable[..., Team], provider_settings: TeamProvider
) -> None:
    """``limited`` asking for 2 s (a wait that fits) and ``slow`` taking 2 s: while the
    deliberation runs, its page and its JSON say who is being called for how long and
    who waits for what; once it ended, nothing is under way."""
    provider_settings.retry_after["limited"] = "2"
    team = start_team(orchestrator={"timeout_s": 5})
    identifier = team.deliberate(["steady", "slow", "limited"], "quick")
    seen_page: set[str] = set()
    seen_json: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        html = team.page(f"/dashboard/deliberations/{identifier}")
        seen_page.update(re.findall(r"(?:waiting for|calling) [^<]*", html))
        record = team.record(identifier)
        seen_json.extend(record["in_flight"])
        if record["status"] != "running" and record["status"] != "queued":
            break
        time.sleep(0.1)
    assert record["status"] == "completed"
    assert record["in_flight"] == []
    waiting = [t for t in seen_page if t.startswith("waiting for limited (propose)")]
    assert waiting, seen_page
    assert "its provider asked to retry in 2 s (Retry-After)" in waiting[0]
    calling = [t for t in seen_page if t.startswith("calling slow (propose)")]
    assert calling, seen_page
    assert re.search(r": \d+\.\d s so far", calling[0])
    assert any(c["agent_id"] == "limited" and c["state"] == "waiting" for c in seen_json)
    assert any(c["agent_id"] == "slow" and c["state"] == "calling" for c in seen_json)
    finished = team.page(f"/dashboard/deliberations/{identifier}")
    assert "Under way" not in finished


def test_a_named_agent_that_is_down_is_left_out_or_the_deliberation_refused(
    team: Team, team_provider: TeamProvider
) -> None:
    """Once ``limited`` is down: a deliberation naming it and two others runs without it,
    the record saying why (its health's reason and until when); one naming it and one
    other is refused (400 too_few_agents) naming it with the same reason. It is not
    asked meanwhile."""
    team.finished(team.deliberate(["steady", "limited"], "quick"))  # asked once: down
    asked = team_provider.asked("limited")
    record = team.finished(team.deliberate(["steady", "stream", "limited"], "quick"))
    assert record["status"] == "completed"
    assert record["agents"] == ["steady", "stream"]
    (left_out,) = record["excluded"]
    assert left_out["agent_id"] == "limited"
    assert left_out["reason"] == "down"
    assert re.match(
        r"down until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+ s\): ", left_out["detail"]
    )
    assert "the provider asked to retry after 30 s" in left_out["detail"]
    refused = team.post(
        "/deliberation", {"user_query": "q", "agent_names": ["steady", "limited"], "scope": "quick"}
    )
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["code"] == "too_few_agents"
    assert error["qualified"] == ["steady"]
    assert [(e["agent_id"], e["reason"]) for e in error["excluded"]] == [("limited", "down")]
    assert error["excluded"][0]["detail"].startswith("down until ")
    assert team_provider.asked("limited") == asked
    page = team.page(f"/dashboard/deliberations/{record['id']}")
    assert "limited (rank 0, down: down until " in page
