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

from tests.team.conftest import Team
from tests.team.provider import TeamProvider

FLOOR_S = 1.0
"""Below this, wall times are noise: the bound is 2 x max(without, FLOOR_S)."""


def timed(team: Team, agents: list[str], scope: str) -> tuple[float, dict[str, Any]]:
    """The wall time of a deliberation among ``agents``, from its request to its end, and
    its record."""
    began = time.monotonic()
    record = team.finished(team.deliberate(agents, scope))
    return time.monotonic() - began, record


def proposal_of(record: dict[str, Any], agent: str, round_: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = next(
        p for p in record["rounds"][round_]["proposals"] if p["agent_id"] == agent
    )
    return found


def test_a_rate_limited_agent_costs_a_named_deliberation_no_wait(
    start_team: Callable[..., Team], team_provider: TeamProvider
) -> None:
    """Three agents, one round, the orchestrator's defaults (a 60 s call deadline): with
    ``limited`` it takes at most twice as long as without it. ``limited`` is asked once:
    its Retry-After (30 s) is longer than a call waits for one (5 s), so the call ends at
    once, saying so, its evaluations are not asked, and its health is down until the
    time its provider asked for."""
    without_s, plain = timed(
        start_team(orchestrator={"timeout_s": 60}), ["steady", "stream"], "quick"
    )
    assert plain["status"] == "completed"
    team = start_team(orchestrator={"timeout_s": 60})
    before = team_provider.asked("limited")
    with_s, record = timed(team, ["steady", "stream", "limited"], "quick")
    assert with_s <= 2 * max(without_s, FLOOR_S), (with_s, without_s)
    assert record["status"] == "completed"
    assert team_provider.asked("limited") - before == 1  # no retry, no evaluation asked
    mine = proposal_of(record, "limited")
    assert mine["attempts"] == 1
    assert "429" in mine["error"]
    assert "not retried: its provider asked not to be called for 30 s more" in mine["error"]
    assert "orchestrator.max_retry_wait_s" in mine["error"]
    skipped = [
        e for p in record["rounds"][0]["proposals"] for e in p["evaluations"]
        if e["evaluator"] == "limited"
    ]  # fmt: skip
    assert len(skipped) == 2
    assert all(e["error"].startswith("not asked: its provider asked") for e in skipped)
    agent = team.get("/agents/limited").json()
    assert agent["health"]["status"] == "down"
    assert agent["cooldown"]["until"] >= time.time() + 20


def test_a_six_agent_standard_deliberation_is_bounded_too(
    start_team: Callable[..., Team],
) -> None:
    """The six agents, two rounds (the team's configuration: a 10 s call deadline): with
    ``limited`` at most twice as long as the five others alone; ``limited`` is asked in
    round 1 only (down in round 2, its calls not made)."""
    five = ["nokey", "garbage", "slow", "steady", "stream"]
    without_s, plain = timed(start_team(), five, "standard")
    assert plain["status"] == "completed"
    with_s, record = timed(start_team(), [*five, "limited"], "standard")
    assert with_s <= 2 * max(without_s, FLOOR_S), (with_s, without_s)
    assert record["status"] == "completed"
    assert proposal_of(record, "limited", 0)["attempts"] == 1
    later = proposal_of(record, "limited", 1)
    assert later["attempts"] == 0
    assert later["error"].startswith("not asked: its provider asked not to be called")
    assert record["result"]["agent_id"] in ("slow", "steady", "stream")


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
