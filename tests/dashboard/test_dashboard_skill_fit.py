"""The dashboard's skill views say how fresh they are (the last fit, the skill events that
await the next one), and the index lists the sources of scores with their warnings, the
gateway's clients named to an admin only."""

from __future__ import annotations

import httpx

from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest
from tests.inprocess import call_app

ADMIN = "dashboard-admin-token-0123456789"
CONFIG = {
    "agents": [
        {"name": "sim_a", "backend": {"kind": "simulated", "quality": 7.0}},
        {"name": "sim_b", "backend": {"kind": "simulated", "quality": 9.0}},
    ],
    "api": {"tokens": [{"role": "admin", "token": ADMIN}]},
}


async def judge(services: Services, agent: str, contract: str, score: float, judge: str) -> None:
    await services.oracle.submit_for_judgment(
        JudgmentRequest(agent_id=agent, contract_id=contract, task_type="qa", score=score,
                        judge=judge)
    )  # fmt: skip


def freshness(page: str) -> str:
    """The freshness line of a page, its whitespace collapsed."""
    start = page.index('class="muted skill-freshness"')
    return " ".join(page[start : page.index("</p>", start)].split())


def test_the_skill_views_say_what_awaits_the_fit_and_list_the_sources() -> None:
    """Before a fit, both pages say so and count the judgments; after it, the time and
    nothing awaiting, and one more judgment awaiting; the index lists the judge alone at
    qa with its warning, and the clients' feedback as one source to anyone but an admin."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index, (agent, score) in enumerate([("sim_a", 6.0), ("sim_b", 9.0)] * 2):
            await judge(services, agent, f"c{index}", score, "gpt")
            await judge(services, agent, f"f{index}", score, f"feedback:team-{index % 2}")
        index_page = (await client.get("/dashboard")).text
        assert 'data-pending="8"' in index_page
        assert "Not fitted yet; 8 skill events await the next fit" in freshness(index_page)
        agent_page = (await client.get("/dashboard/agents/sim_a")).text
        assert "Not fitted yet; 8 skill events await the next fit" in freshness(agent_page)
        report = await services.skill.fit()
        assert report.at is not None
        index_page = (await client.get("/dashboard")).text
        assert "; no evidence awaits the next fit." in freshness(index_page)
        assert "Fitted 20" in freshness(index_page)
        table = index_page[index_page.index('id="skill-judges"') :]
        table = table[: table.index("</table>")]
        assert '<tr data-source="judge:feedback">' in table
        assert "team-" not in table
        assert '<tr data-source="judge:gpt">' in table
        admin = await client.get("/dashboard", headers={"authorization": f"Bearer {ADMIN}"})
        named = admin.text[admin.text.index('id="skill-judges"') :]
        assert '<tr data-source="judge:feedback:team-0">' in named
        await judge(services, "sim_b", "c9", 8.0, "gpt")
        agent_page = (await client.get("/dashboard/agents/sim_b")).text
        assert "1 skill event awaits the next fit" in freshness(agent_page)

    call_app(CONFIG, body, seed=None)


def test_a_lone_judge_is_marked_alone_on_the_index() -> None:
    """One judge of every score: its row carries the warning that nothing checks it."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index, (agent, score) in enumerate([("sim_a", 6.0), ("sim_b", 9.0)] * 2):
            await judge(services, agent, f"c{index}", score, "gpt")
        await services.skill.fit()
        page = (await client.get("/dashboard")).text
        row = page[page.index('<tr data-source="judge:gpt">') :]
        row = row[: row.index("</tr>")]
        assert '<span class="tag warn">alone: its leniency cannot be learned</span>' in row
        assert "100.0%" in row

    call_app(CONFIG, body, seed=None)
