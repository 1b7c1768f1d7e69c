"""One pagination shape on every list: its items, ``page`` {offset, limit, next}, and
the next page's link in ``Link``; following ``next`` visits every item once."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import ADMIN, ORCH, bearer

LISTS = [
    ("/deliberations", "deliberations", "id"),
    ("/oracle/profiles/sim_a/history", "entries", None),
    ("/oracle/leaderboard", "entries", "agent_id"),
    ("/agents/directory", "agents", "name"),
]


async def fill(client: httpx.AsyncClient, services: Services) -> None:
    """Five reported deliberations, five judged agents (sim_a four times), seven agents."""
    for n in range(5):
        report = {
            "deliberation_id": f"d{n}",
            "rounds": [
                {"agents": {"sim_a": {"aggregated_score": 7.0}, "sim_b": {"aggregated_score": 6.0}}}
            ],
        }
        assert (await client.post("/deliberations/results", json=report,
                                  headers=bearer(ORCH))).status_code == 200  # fmt: skip
    await services.orchestrator.settle()
    for n in range(4):
        await client.post("/agents/heartbeat", json={"name": f"extra_{n}"}, headers=bearer(ADMIN))
    for agent in ("sim_c", "extra_0", "extra_1"):
        judgment = {"agent_id": agent, "contract_id": f"c-{agent}", "score": 8.0}
        assert (await client.post("/oracle/judgments", json=judgment,
                                  headers=bearer(ORCH))).status_code == 200  # fmt: skip


async def walk(client: httpx.AsyncClient, first: str, key: str) -> tuple[list[Any], int]:
    """Every item from ``first`` on, following ``page.next``; and the pages read."""
    items: list[Any] = []
    url: str | None = first
    pages = 0
    while url is not None:
        answer = await client.get(url)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert set(body["page"]) == {"offset", "limit", "next"}
        items.extend(body[key])
        url = body["page"]["next"]
        if url is None:
            assert "link" not in answer.headers
        else:
            assert answer.headers["link"] == f'<{url}>; rel="next"'
            assert len(body[key]) == body["page"]["limit"]
        pages += 1
        assert pages < 50
    return items, pages


@pytest.mark.parametrize(("path", "key", "ident"), LISTS)
def test_every_list_pages_the_same_way(api: Any, path: str, key: str, ident: str | None) -> None:
    """Pages of 2 followed by their next links give the whole list, in order, once each."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await fill(client, services)
        whole = (await client.get(path, params={"limit": 1000})).json()
        assert whole["page"] == {"offset": 0, "limit": 1000, "next": None}
        expected = whole[key]
        assert len(expected) >= 4
        paged, pages = await walk(client, f"{path}?limit=2", key)
        assert paged == expected
        assert pages == -(-len(expected) // 2)  # the last page says it is the last
        if ident is not None:
            assert len({item[ident] for item in paged}) == len(paged)

    api(body)


def test_the_next_link_keeps_the_other_parameters(api: Any) -> None:
    """A filtered directory's next link keeps the filter; without a limit the whole
    directory comes as one page with no next."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await fill(client, services)
        first = (
            await client.get("/agents/directory", params={"provider": "sim", "limit": 1})
        ).json()
        assert first["page"]["next"] is not None
        assert "provider=sim" in first["page"]["next"]
        assert "offset=1" in first["page"]["next"]
        second = (await client.get(first["page"]["next"])).json()
        assert [a["provider_id"] for a in first["agents"] + second["agents"]] == ["sim", "sim"]
        assert second["page"]["next"] is None
        everything = (await client.get("/agents/directory")).json()
        assert everything["page"] == {"offset": 0, "limit": None, "next": None}
        assert len(everything["agents"]) == 7

    api(body)
