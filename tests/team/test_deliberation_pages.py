"""The team's deliberations on the dashboard: how long each took or has been running,
and an agent's count of its deliberations matching the list under it."""

from __future__ import annotations

import re
import time

from tests.team.conftest import Team


def row_of(html: str, identifier: str) -> str:
    """The deliberations list's row of ``identifier``."""
    found = re.search(rf'<tr data-deliberation="{identifier}">(.*?)</tr>', html, re.S)
    assert found is not None, html[-2000:]
    return found.group(1)


def test_the_list_shows_a_running_deliberation_running_and_each_ones_duration(
    team: Team,
) -> None:
    """While ``slow`` answers (2 s), the list shows the deliberation ``running`` with
    "running for"; once it ended, its duration (finished - started)."""
    identifier = team.deliberate(["steady", "slow"], "quick")
    seen = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row = row_of(team.page("/dashboard/deliberations"), identifier)
        if "running for" in row:
            seen = row
            break
        time.sleep(0.05)
    assert 'class="state running">running<' in seen
    record = team.finished(identifier)
    took = record["finished_at"] - record["started_at"]
    row = row_of(team.page("/dashboard/deliberations"), identifier)
    assert f'<td class="num">{took:.1f} s</td>' in row
    assert '<th class="num">Duration</th>' in team.page("/dashboard/deliberations")


def test_an_agents_page_counts_the_deliberations_it_took_part_in(team: Team) -> None:
    """``nokey`` never had a proposal scored: its page counts the deliberation it took
    part in (the one listed under it), scored in none."""
    team.finished(team.deliberate(["steady", "nokey"], "quick"))
    html = team.page("/dashboard/agents/nokey")
    listed = re.findall(r'<tr data-deliberation="', html)
    count = re.search(r'id="agent-deliberation-count">(\d+)</strong>', html)
    assert count is not None
    assert int(count.group(1)) == len(listed) >= 1
    assert "scored in 0" in html
