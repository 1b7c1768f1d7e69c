"""agentladder.client against a real served instance: every method, sync and async, the
error tree from the API's error body, and judge_many chunked past the batch limit."""

from __future__ import annotations

import asyncio
import itertools

import httpx
import pytest

from agentladder.client import (
    BATCH_MAX,
    AgentConfig,
    AsyncLadder,
    Conflict,
    ExternalDeliberation,
    Forbidden,
    InvalidInput,
    JudgmentRequest,
    Ladder,
    NotFound,
    ReportedAgent,
    ReportedRound,
    RouteRequest,
    TooFewAgents,
    Unauthorized,
)
from agentladder.domain.routing import Strategy
from agentladder.services.oracle.batch import ItemStatus
from tests.client.conftest import ADMIN, AGENT, ORCH
from tests.served import Server

_ids = itertools.count()


def fresh(prefix: str) -> str:
    """An id no other test of the module uses."""
    return f"{prefix}-{next(_ids)}"


def external(deliberation_id: str) -> ExternalDeliberation:
    """A two-agent deliberation run elsewhere, with raw peer scores."""
    return ExternalDeliberation(
        deliberation_id=deliberation_id,
        task_type="code",
        rounds=(
            ReportedRound(
                agents={
                    "sim_a": ReportedAgent(aggregated_score=6.0, evaluations={"sim_b": 6.0}),
                    "sim_b": ReportedAgent(aggregated_score=8.5, evaluations={"sim_a": 8.5}),
                }
            ),
        ),
    )


def test_every_method_sync(served: Server) -> None:
    """Each method of Ladder answers the API's model with the server's values."""
    with Ladder(served.base, token=ADMIN) as ladder:
        contract = fresh("sync")
        judged = ladder.judge(
            JudgmentRequest(agent_id="sim_a", contract_id=contract, task_type="code", score=9.2)
        )
        assert (judged.agent_id, judged.contract_id, judged.duplicate) == ("sim_a", contract, False)
        assert judged.xp_awarded > 0
        again = ladder.judge(
            JudgmentRequest(agent_id="sim_a", contract_id=contract, task_type="code", score=9.2)
        )
        assert again.duplicate
        assert again.xp_awarded == judged.xp_awarded
        assert ladder.profile("sim_a").xp >= judged.total_xp
        scaled = ladder.judge(JudgmentRequest(agent_id="sim_b", contract_id=fresh("scaled"),
                                              score=80, scale="0-100"))  # fmt: skip
        assert scaled.score == pytest.approx(8.0)
        identifier = fresh("ext")
        accepted = ladder.report(external(identifier))
        assert (accepted.deliberation_id, accepted.duplicate) == (identifier, False)
        assert ladder.report(external(identifier)).duplicate
        record = ladder.deliberation(identifier)
        assert record.source == "external"
        assert record.agents == ["sim_a", "sim_b"]
        decision = ladder.should_validate("sim_a", task_type="code", force=True)
        assert decision.validate_output
        assert decision.reason == "requested"
        checked: list[str] = []

        def check() -> bool:
            checked.append("ran")
            return True

        done = ladder.validate("sim_a", contract, check, task_type="code", force=True)
        assert checked == ["ran"]
        assert done.result is not None
        assert done.result.passed
        assert done.result.contract_id == contract
        board = ladder.skills("code")
        assert board.task_type == "code"
        assert "sim_a" in {e.agent_id for e in board.entries}  # judged at code just now
        assert ladder.agent_skills("sim_a").overall.agent_id == "sim_a"
        assert board.pending >= 1  # the judgment just made awaits the fit
        fitted = ladder.fit_skills()
        assert fitted.pending == 0
        assert fitted.fitted_at is not None
        assert fitted.seconds <= fitted.waited_s
        assert ladder.skills("code", fresh=True).fitted_at == fitted.fitted_at
        mine = ladder.agent_skills("sim_a", fresh=True)
        assert (mine.pending, mine.fitted_at) == (0, fitted.fitted_at)
        judges = ladder.skill_judges()
        assert "judge:oracle" in {j.source for j in judges.judges}
        assert judges.fitted_at == fitted.fitted_at
        routed = ladder.route(RouteRequest(count=2, task_type="code"))
        assert sorted(p.agent_id for p in routed.agents) == ["sim_a", "sim_b"]
        agent = ladder.heartbeat(AgentConfig(name="ext_sync", provider_id="acme", model_name="m1"))
        assert (agent.name, agent.provider_id, agent.status) == ("ext_sync", "acme", "online")


def test_route_of_one_agent_with_a_relative_floor(served: Server) -> None:
    """RouteRequest of one agent, cheapest_above at 90% of the best available agent: one
    pick, the floor computed from the reference, the pick's probability of clearing it."""
    with Ladder(served.base, token=ADMIN) as ladder:
        one = ladder.route(RouteRequest(
            count=1, task_type="code", strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.9,
        ))  # fmt: skip
    assert len(one.agents) == 1
    assert one.reference is not None
    assert one.quality_floor == pytest.approx(0.9 * one.reference.skill, abs=1e-6)
    assert one.agents[0].p_floor is not None


def test_savings_reads_the_gateways_routed_traffic(served: Server) -> None:
    """Ladder.savings and AsyncLadder.savings: the server's report; this server's gateway
    has routed nothing, so there is no overall and no task type, and the window asked for
    is the one read."""
    with Ladder(served.base, token=ADMIN) as ladder:
        report = ladder.savings(window_s=3600.0, seed=3)
    assert (report.overall, report.task_types, report.routed) == (None, [], 0)
    assert report.until - report.since == pytest.approx(3600.0)
    assert report.seed == 3

    async def main() -> None:
        async with AsyncLadder(served.base, token=ADMIN) as ladder:
            again = await ladder.savings()
        assert again.overall is None
        assert again.until - again.since == pytest.approx(7 * 86_400.0)

    asyncio.run(main())


def test_every_method_async(served: Server) -> None:
    """Each method of AsyncLadder answers as Ladder's does (a coroutine check too)."""

    async def main() -> None:
        async with AsyncLadder(served.base, token=ADMIN) as ladder:
            contract = fresh("async")
            judged = await ladder.judge(
                JudgmentRequest(agent_id="sim_b", contract_id=contract, task_type="code", score=7)
            )
            assert judged.contract_id == contract
            assert not judged.duplicate
            assert (await ladder.profile("sim_b")).id == "sim_b"
            results = await ladder.judge_many(
                [JudgmentRequest(agent_id="sim_b", contract_id=fresh("am"), score=6),
                 JudgmentRequest(agent_id="sim_b", contract_id=contract, task_type="code",
                                 score=7)]
            )  # fmt: skip
            assert [r.status for r in results] == ["imported", "duplicate"]
            identifier = fresh("aext")
            assert (await ladder.report(external(identifier))).deliberation_id == identifier
            assert (await ladder.deliberation(identifier)).status == "completed"

            async def passes() -> bool:
                return False

            done = await ladder.validate("sim_b", contract, passes, task_type="code", force=True)
            assert done.result is not None
            assert not done.result.passed
            assert done.result.counted_as_failure
            decision = await ladder.should_validate("sim_b", task_type="code")
            assert decision.validate_output
            assert decision.rate == 1.0
            assert (await ladder.skills()).task_type is None
            assert (await ladder.agent_skills("sim_b")).overall.agent_id == "sim_b"
            boards = await asyncio.gather(ladder.fit_skills(), ladder.skills(fresh=True))
            assert [b.pending for b in boards] == [0, 0]
            assert boards[0].fitted_at == boards[1].fitted_at
            assert (await ladder.agent_skills("sim_b", fresh=True)).pending == 0
            assert (await ladder.skill_judges()).judges
            routed = await ladder.route(RouteRequest(count=2, task_type="code"))
            assert len(routed.agents) == 2
            agent = await ladder.heartbeat(AgentConfig(name="ext_async", provider_id="acme"))
            assert agent.name == "ext_async"

    asyncio.run(main())


def test_errors_sync(served: Server) -> None:
    """The API's refusals arrive as the client's exceptions, with the body's fields."""
    one = JudgmentRequest(agent_id="sim_a", contract_id=fresh("err"), score=5)
    with Ladder(served.base, token=ORCH) as ladder:
        with pytest.raises(InvalidInput) as refused:
            ladder.judge(JudgmentRequest(agent_id="sim_zz", contract_id=fresh("e"), score=5))
        assert (refused.value.status, refused.value.code) == (422, "invalid_input")
        assert (refused.value.field, refused.value.value) == ("agent_id", "sim_zz")
        assert "sim_zz" in str(refused.value)
        assert "\n" not in str(refused.value)
        with pytest.raises(NotFound) as missing:
            ladder.profile("nobody_here")
        assert missing.value.suggestions == []
        with pytest.raises(NotFound) as typo:
            ladder.profile("simb")
        assert typo.value.suggestions == ["sim_b"]
        assert str(typo.value) == "404 not_found: profile 'simb' not found; did you mean sim_b?"
        ladder.judge(one)
        with pytest.raises(Conflict):
            ladder.judge(one.model_copy(update={"score": 6.0}))
        with pytest.raises(TooFewAgents) as few:
            ladder.route(RouteRequest(count=9))
        assert few.value.status == 400
        assert len(few.value.excluded) + len(few.value.qualified) >= 2
        for admins_only in (ladder.fit_skills, lambda: ladder.skills(fresh=True)):
            with pytest.raises(Forbidden) as not_admin:
                admins_only()
            assert not_admin.value.status == 403
    for token in (None, "not-a-known-token-0123456789"):
        with Ladder(served.base, token=token) as nobody, pytest.raises(Unauthorized) as denied:
            nobody.judge(one)
        assert denied.value.status == 401
    with Ladder(served.base, token=AGENT) as agent, pytest.raises(Forbidden) as forbidden:
        agent.judge(one)
    assert forbidden.value.status == 403


def test_errors_async(served: Server) -> None:
    """AsyncLadder raises the same exceptions for the same refusals."""

    async def main() -> None:
        async with AsyncLadder(served.base, token=ORCH) as ladder:
            with pytest.raises(InvalidInput) as refused:
                await ladder.judge(
                    JudgmentRequest(agent_id="sim_q", contract_id=fresh("ae"), score=1)
                )
            assert (refused.value.field, refused.value.value) == ("agent_id", "sim_q")
            with pytest.raises(NotFound):
                await ladder.deliberation("no-such-deliberation")
        async with AsyncLadder(served.base) as nobody:
            with pytest.raises(Unauthorized):
                await nobody.report(external(fresh("anon")))
            with pytest.raises(Unauthorized):
                await nobody.agent_skills("sim_a", fresh=True)
            assert (await nobody.skill_judges()).pending >= 0  # a read: anyone may
        async with AsyncLadder(served.base, token=AGENT) as agent:
            with pytest.raises(Forbidden):
                await agent.should_validate("sim_a")

    asyncio.run(main())


class Counting(httpx.BaseTransport):
    """A real HTTP transport that counts the requests it sends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.bodies: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(len(request.read()))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_judge_many_chunks_past_the_batch_limit(served: Server) -> None:
    """2,501 judgments go in three batches of at most 1,000 and come back one result per
    judgment, in order: a duplicate and an unknown agent in the middle keep their place."""
    prefix = fresh("many")
    judgments = [
        JudgmentRequest(agent_id="sim_a" if i % 2 else "sim_b", contract_id=f"{prefix}-{i}",
                        score=float(i % 11))
        for i in range(2501)
    ]  # fmt: skip
    judgments[1500] = judgments[3]  # the same contract again, later: a duplicate
    judgments[1700] = JudgmentRequest(agent_id="sim_nobody", contract_id="x", score=1)
    counting = Counting()
    with Ladder(served.base, token=ORCH, transport=counting, timeout=120) as ladder:
        results = ladder.judge_many(judgments)
    assert len(counting.bodies) == 3 > 2501 // BATCH_MAX
    assert [r.contract_id for r in results] == [j.contract_id for j in judgments]
    assert [r.agent_id for r in results] == [j.agent_id for j in judgments]
    statuses = [r.status for r in results]
    assert statuses[1500] == "duplicate"
    assert statuses[1700] == "refused"
    assert statuses.count(ItemStatus.IMPORTED) == 2499
