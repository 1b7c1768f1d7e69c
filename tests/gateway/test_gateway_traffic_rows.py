"""The Traffic page's rows through the real request path: the gateway in-process (OpenAI's
async client through httpx's ASGI transport) in front of the local providers, its judge
held by the test. A request that names no task type is one row, at the task type its
check and feedback are recorded at (``general``), answered and checked alike; a request
the classifier typed is counted at its task type, with how it was classified."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from agentladder.api.app import create_app
from agentladder.config import parse_settings
from agentladder.services.container import Services, build_services
from tests.gateway.judging import Judging, gateway_config
from tests.gateway.provider import Providers

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key variables."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    monkeypatch.setenv("GW_KEY_BRAVO", "sk-bravo-secret")


def rows(html: str) -> dict[tuple[str, str], list[str]]:
    """The requests table: (agent, task type) -> its cells' text after the task type."""
    table = html[html.index('id="traffic-requests"') :]
    table = table[: table.index("</table>")]
    found = {}
    for agent, task_type, body in re.findall(
        r'<tr data-agent="([^"]*)" data-task-type="([^"]*)">(.*?)</tr>', table, re.S
    ):
        cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(
            r"<td[^>]*>(.*?)</td>", body, re.S)]  # fmt: skip
        assert cells[1] == task_type
        found[agent, task_type] = cells[2:]
    return found


def test_an_untyped_request_is_one_row_at_the_task_type_it_is_checked_at(
    providers: Providers,
) -> None:
    """Three requests to alpha naming no task type are answered and checked (the first
    always: a rookie) at ``general``, the judge's default task type: one row, 3 answered,
    as many checked and passed as were told ``yes``; no row without a task type. Two
    routed requests that name none are typed ``audit`` by a rule: counted there, the
    Classified cell says ``rule`` and how many."""
    config: dict[str, Any] = gateway_config(providers.base_url)
    config["gateway"]["classify"] = {"rules": [{"task_type": "audit", "keywords": ["controls"]}]}

    async def main() -> None:
        services = await build_services(parse_settings(config), store_url="memory://", seed=7)
        Judging(score=9.0).install(services)
        transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
        http = httpx.AsyncClient(transport=transport, base_url="http://localhost")
        client = openai.AsyncOpenAI(
            base_url="http://localhost/v1", api_key="local", max_retries=0,
            http_client=http,  # type: ignore[arg-type]  # its httpx fork takes httpx's client
        )  # fmt: skip
        try:
            await body(client, http, services)
        finally:
            await client.close()
            await services.close()

    async def body(client: openai.AsyncOpenAI, http: httpx.AsyncClient, services: Services) -> None:
        said = []
        for _ in range(3):
            raw = await client.chat.completions.with_raw_response.create(
                model="alpha", messages=ASK
            )
            said.append(raw.headers["x-agentladder-check"])
        assert said[0] == "yes"  # a rookie's first answer (later ones: its level at general)
        routed = []
        for _ in range(2):
            raw = await client.chat.completions.with_raw_response.create(
                model="route", messages=ASK
            )
            assert raw.headers["x-agentladder-classified"] == "rule"
            assert raw.headers["x-agentladder-task-type"] == "audit"
            routed.append(raw.headers["x-agentladder-agent"])
        checks = services.gateway.totals.checks
        async with asyncio.timeout(30):
            while sum(n for (_, _, o), n in checks.items() if o in ("passed", "failed")) < sum(
                n for (_, _, o), n in checks.items() if o == "started"
            ):
                await asyncio.sleep(0.01)
        found = rows((await http.get("/dashboard/traffic")).text)
        assert all(task_type for _, task_type in found), found
        answered, checked, passed = found["alpha", "general"][0], *found["alpha", "general"][4:6]
        yes = said.count("yes")
        assert (answered, checked, passed) == ("3", f"{yes} ({yes / 3:.1%})", str(yes))
        assert found["alpha", "general"][-1] == "—"  # not classified
        at_audit = {agent: cells for (agent, task_type), cells in found.items()
                    if task_type == "audit"}  # fmt: skip
        assert sum(int(cells[0]) for cells in at_audit.values()) == 2
        assert {agent: cells[-1] for agent, cells in at_audit.items()} == {
            agent: f"rule {routed.count(agent)}" for agent in set(routed)
        }

    asyncio.run(main())
