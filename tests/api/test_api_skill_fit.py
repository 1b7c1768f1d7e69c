"""How fresh a skill answer is, and the ways to wait for the fit: every skill answer says
when the last fit ran and how many skill events await the next one; ``POST /skills/fit``
(admin) fits them, concurrent callers sharing one fit; ``?fresh=true`` (admin) fits first;
a reader is refused both (docs/api.md, docs/skill.md "Between two fits")."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from agentladder.services.container import Services
from agentladder.store.skills import FitFold
from tests.api.conftest import ADMIN, AGENT_A, ORCH, bearer


async def judge(client: httpx.AsyncClient, agent: str, contract: str, score: float) -> None:
    judgment = {"agent_id": agent, "contract_id": contract, "task_type": "qa", "score": score}
    sent = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
    assert sent.status_code == 200, sent.text


async def freshness(client: httpx.AsyncClient) -> list[tuple[Any, Any, Any]]:
    """(fitted_at, pending, next_fit_within_s) of every skill answer, in one order."""
    board = (await client.get("/skills")).json()
    typed = (await client.get("/skills", params={"task_type": "qa"})).json()
    mine = (await client.get("/agents/sim_a/skills")).json()
    agent = (await client.get("/agents/sim_a")).json()["skill"]
    judges = (await client.get("/skills/judges")).json()
    return [
        (a["fitted_at"], a["pending"], a["next_fit_within_s"])
        for a in (board, typed, mine, agent, judges)
    ]


def rounded(board: dict[str, Any]) -> list[tuple[str, float, float]]:
    """A board's agents and skills to 1e-6 (an sd widens with the time it is read at)."""
    return [(e["agent_id"], round(e["skill"], 6), round(e["sd"], 6)) for e in board["entries"]]


def test_every_skill_answer_says_what_awaits_the_fit(api: Any) -> None:
    """Judgments before any fit: every answer says no fit yet and counts them; an admin's
    POST /skills/fit fits them (pending 0, its time in every answer); one more judgment is
    pending again; a second call fits it, a third has nothing to do."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index, (agent, score) in enumerate([("sim_a", 8.0), ("sim_b", 4.0)] * 2):
            await judge(client, agent, f"c{index}", score)
        assert await freshness(client) == [(None, 4, None)] * 5
        before = time.time()
        fitted = await client.post("/skills/fit", headers=bearer(ADMIN))
        assert fitted.status_code == 200, fitted.text
        done = fitted.json()
        assert done["ran"] is True
        assert done["events"] == 4
        assert done["pending"] == 0
        assert before <= done["fitted_at"] <= time.time()
        assert 0 <= done["seconds"] <= done["waited_s"]
        assert await freshness(client) == [(done["fitted_at"], 0, None)] * 5
        await judge(client, "sim_a", "c9", 9.0)
        assert await freshness(client) == [(done["fitted_at"], 1, None)] * 5
        again = (await client.post("/skills/fit", headers=bearer(ADMIN))).json()
        assert (again["ran"], again["events"], again["pending"]) == (True, 5, 0)
        assert again["fitted_at"] > done["fitted_at"]
        idle = (await client.post("/skills/fit", headers=bearer(ADMIN))).json()
        assert (idle["ran"], idle["seconds"], idle["pending"]) == (False, 0.0, 0)
        assert idle["fitted_at"] == again["fitted_at"]

    api(body)


def test_fit_and_fresh_are_an_admins(api: Any) -> None:
    """Without a token: 401; an orchestrator's or an agent's token: 403, nothing fitted;
    the answers without ``fresh`` stay open to anyone."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await judge(client, "sim_a", "c1", 7.0)
        calls = [
            ("POST", "/skills/fit", {}),
            ("GET", "/skills", {"fresh": "true"}),
            ("GET", "/agents/sim_a/skills", {"fresh": "true"}),
        ]
        for method, path, params in calls:
            for headers, status in [({}, 401), (bearer(ORCH), 403), (bearer(AGENT_A), 403)]:
                answer = await client.request(method, path, params=params, headers=headers)
                assert answer.status_code == status, (method, path, headers, answer.text)
                assert answer.json()["error"]["code"] in ("unauthorized", "forbidden")
        assert (await services.store.get_fleet_skill()).fit is None
        assert (await client.get("/skills", params={"fresh": "false"})).json()["pending"] == 1
        wrong = await client.get("/skills", params={"fresh": "soon"}, headers=bearer(ADMIN))
        assert wrong.status_code == 422
        assert wrong.json()["error"]["field"].endswith("fresh")

    api(body)


def test_fresh_fits_first_and_answers_what_the_fit_gives(api: Any) -> None:
    """After a burst of judgments the board of filter steps is not the fit's; with
    ``fresh=true`` the board is the one a fit gives (the same as after POST /skills/fit),
    with nothing pending, for the whole board and for one agent."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await judge(client, "sim_a", "a0", 6.0)
        await client.post("/skills/fit", headers=bearer(ADMIN))
        for index in range(6):
            await judge(client, "sim_a", f"a{index + 1}", 9.5)
            await judge(client, "sim_b", f"b{index}", 3.0)
        stepped = (await client.get("/skills")).json()
        assert stepped["pending"] == 12
        fresh = await client.get("/skills", params={"fresh": "true"}, headers=bearer(ADMIN))
        assert fresh.status_code == 200, fresh.text
        board = fresh.json()
        assert board["pending"] == 0
        assert board["fitted_at"] > stepped["fitted_at"]
        assert rounded(board) != rounded(stepped)
        assert rounded((await client.get("/skills")).json()) == rounded(board)
        await judge(client, "sim_a", "a9", 9.0)
        mine = await client.get(
            "/agents/sim_a/skills", params={"fresh": "true"}, headers=bearer(ADMIN)
        )
        assert mine.status_code == 200, mine.text
        assert mine.json()["pending"] == 0
        assert mine.json()["overall"]["observations"] == 8

    api(body)


def test_concurrent_callers_share_one_fit(api: Any) -> None:
    """Six admins ask at once (POST and fresh reads): one fit runs, the others share it;
    asked again while nothing is pending, none runs."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index in range(5):
            await judge(client, "sim_a", f"c{index}", 7.0)
        commits: list[int] = []
        commit = services.store.commit_skill_fit

        async def counted(seq: int, fold: FitFold) -> None:
            commits.append(seq)
            await commit(seq, fold)

        services.store.commit_skill_fit = counted  # type: ignore[method-assign]
        admin = bearer(ADMIN)
        answers = await asyncio.gather(
            *(client.post("/skills/fit", headers=admin) for _ in range(4)),
            client.get("/skills", params={"fresh": "true"}, headers=admin),
            client.get("/agents/sim_a/skills", params={"fresh": "true"}, headers=admin),
        )
        assert [a.status_code for a in answers] == [200] * 6
        assert len(commits) == 1
        assert sorted(a.json().get("ran", False) for a in answers[:4]) == [False] * 3 + [True]
        assert {a.json()["pending"] for a in answers} == {0}
        assert len({a.json()["fitted_at"] for a in answers}) == 1
        await asyncio.gather(*(client.post("/skills/fit", headers=admin) for _ in range(3)))
        assert len(commits) == 1

    api(body)
