"""The client's methods that take a request model take it as the model, a dict or keyword
arguments (sync and async), against a real served instance: the same request is sent
whichever form, a refused keyword is the client's one-line ``InvalidInput`` naming the
field and value (nothing sent), and a model with keywords too is a ``TypeError``."""

from __future__ import annotations

import asyncio
import itertools
import typing

import httpx
import pytest
from pydantic import BaseModel

from agentladder.client import (
    AgentConfig,
    AgentFields,
    AsyncLadder,
    CallFields,
    CallOutcomeIn,
    ExternalDeliberation,
    ExternalFields,
    InvalidInput,
    JudgmentFields,
    JudgmentRequest,
    Ladder,
    RouteFields,
    RouteRequest,
)
from tests.client.conftest import ADMIN, ORCH
from tests.served import Server

_ids = itertools.count()


def fresh(prefix: str) -> str:
    """An id no other test of the module uses."""
    return f"kw-{prefix}-{next(_ids)}"


class Sent(httpx.BaseTransport):
    """A real HTTP transport that counts the requests it sends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.count = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize(
    ("fields", "model"),
    [
        (JudgmentFields, JudgmentRequest),
        (RouteFields, RouteRequest),
        (ExternalFields, ExternalDeliberation),
        (AgentFields, AgentConfig),
        (CallFields, CallOutcomeIn),
    ],
)
def test_each_keyword_set_names_its_models_fields(fields: type, model: type[BaseModel]) -> None:
    """The keywords an editor offers are exactly the model's fields, in its order."""
    assert list(typing.get_type_hints(fields)) == list(model.model_fields)


def test_judge_keyword_dict_and_model_forms(served: Server) -> None:
    """judge(**keywords), judge(dict) and judge(model) award the same; the keyword form of
    the same contract again is a duplicate of the model form's."""
    with Ladder(served.base, token=ORCH) as ladder:
        contract = fresh("judge")
        by_keywords = ladder.judge(agent_id="sim_a", contract_id=contract, score=8.0)
        assert (by_keywords.agent_id, by_keywords.contract_id) == ("sim_a", contract)
        assert not by_keywords.duplicate
        by_model = ladder.judge(JudgmentRequest(agent_id="sim_a", contract_id=contract, score=8))
        by_dict = ladder.judge({"agent_id": "sim_a", "contract_id": contract, "score": 8.0})
        assert by_model.duplicate
        assert by_dict.duplicate
        assert by_model.xp_awarded == by_dict.xp_awarded == by_keywords.xp_awarded
        scaled = ladder.judge(agent_id="sim_b", contract_id=fresh("s"), score=0.7, scale="0-1")
        assert scaled.score == pytest.approx(7.0)


def test_judge_many_mixes_dicts_and_models(served: Server) -> None:
    """judge_many takes dicts and models in one list: one result each, in order."""
    first, second, third = fresh("m"), fresh("m"), fresh("m")
    with Ladder(served.base, token=ORCH) as ladder:
        results = ladder.judge_many(
            [
                {"agent_id": "sim_a", "contract_id": first, "score": 6},
                JudgmentRequest(agent_id="sim_b", contract_id=second, score=7),
                {"agent_id": "sim_b", "contract_id": third, "success": True, "task_type": "code"},
            ]
        )
    assert [(r.contract_id, r.status) for r in results] == [
        (first, "imported"),
        (second, "imported"),
        (third, "imported"),
    ]


def test_a_refused_dict_in_judge_many_is_named_by_its_index(served: Server) -> None:
    """A dict its model refuses, third of five: InvalidInput naming judgments.2.score."""
    items: list[JudgmentRequest | dict[str, object]] = [
        {"agent_id": "sim_a", "contract_id": fresh("b"), "score": 5} for _ in range(5)
    ]
    items[2] = {"agent_id": "sim_a", "contract_id": fresh("b"), "score": "high"}
    sent = Sent()
    with (
        Ladder(served.base, token=ORCH, transport=sent) as ladder,
        pytest.raises(InvalidInput) as refused,
    ):
        ladder.judge_many(items)
    items[2] = {"agent_id": "sim_a", "contract_id": fresh("b"), "score": 300, "scale": "0-100"}
    with (
        Ladder(served.base, token=ORCH, transport=sent) as ladder,
        pytest.raises(InvalidInput) as scaled,
    ):
        ladder.judge_many(items)
    assert str(scaled.value) == "invalid_input: judgments.2.score: is outside the scale 0-100 (300)"
    assert sent.count == 0
    assert (refused.value.field, refused.value.value) == ("judgments.2.score", "high")
    assert str(refused.value) == (
        "invalid_input: judgments.2.score: Input should be a valid number, unable to parse"
        " string as a number ('high')"
    )


def test_route_keyword_forms_and_a_count_of_one(served: Server) -> None:
    """route(task_type=...) picks one agent (count 1 by default); count=2 two; a dict and
    a RouteRequest as before."""
    with Ladder(served.base, token=ADMIN) as ladder:
        one = ladder.route(task_type="code")
        two = ladder.route(task_type="code", count=2, strategy="best")
        by_dict = ladder.route({"task_type": "code"})
        by_model = ladder.route(RouteRequest(count=1, task_type="code"))
    assert len(one.agents) == len(by_dict.agents) == len(by_model.agents) == 1
    assert sorted(p.agent_id for p in two.agents) == ["sim_a", "sim_b"]
    assert one.task_type == "code"


def test_report_and_heartbeat_keyword_forms(served: Server) -> None:
    """report(deliberation_id=..., rounds=[dicts]) and heartbeat(name=...) as their models."""
    identifier = fresh("ext")
    rounds = [
        {
            "agents": {
                "sim_a": {"aggregated_score": 6.0, "evaluations": {"sim_b": 6.0}},
                "sim_b": {"aggregated_score": 8.0, "evaluations": {"sim_a": 8.0}},
            }
        }
    ]
    with Ladder(served.base, token=ADMIN) as ladder:
        accepted = ladder.report(deliberation_id=identifier, task_type="code", rounds=rounds)
        assert (accepted.deliberation_id, accepted.duplicate) == (identifier, False)
        assert ladder.report({"deliberation_id": identifier, "rounds": rounds,
                              "task_type": "code"}).duplicate  # fmt: skip
        agent = ladder.heartbeat(name="kw_agent", provider_id="acme", model_name="m2")
        assert (agent.name, agent.provider_id) == ("kw_agent", "acme")
        assert ladder.heartbeat({"name": "kw_agent", "provider_id": "acme"}).status == "online"


@pytest.mark.parametrize(
    ("fields", "field", "value", "message"),
    [
        (
            {"agent_id": "sim_a", "contract_id": "x", "scor": 8.0},
            "scor",
            8.0,
            "invalid_input: scor: is not a field of JudgmentRequest (did you mean score?) (8.0)",
        ),
        (
            {"agent_id": "sim_a", "contract_id": "x", "score": "eight"},
            "score",
            "eight",
            "invalid_input: score: Input should be a valid number, unable to parse string as a"
            " number ('eight')",
        ),
        (
            {"agent_id": "sim_a", "contract_id": "x", "score": 11},
            "score",
            11,
            "invalid_input: score: Input should be less than or equal to 10 (11)",
        ),
        (
            {"agent_id": "sim_a", "score": 5},
            "contract_id",
            None,
            "invalid_input: contract_id: is required",
        ),
    ],
)
def test_a_refused_keyword_is_one_line_naming_field_and_value(
    served: Server, fields: dict[str, object], field: str, value: object, message: str
) -> None:
    """An unknown field (with the closest known one), a wrong type, a value out of range,
    a missing field: InvalidInput, status None (not sent), one line, field and value."""
    sent = Sent()
    with Ladder(served.base, token=ORCH, transport=sent) as ladder:
        with pytest.raises(InvalidInput) as refused:
            ladder.judge(**fields)  # type: ignore[arg-type]  # wrong on purpose
        with pytest.raises(InvalidInput) as as_dict:
            ladder.judge(fields)
    assert sent.count == 0
    for error in (refused.value, as_dict.value):
        assert (error.status, error.code, error.field, error.value) == (
            None, "invalid_input", field, value,
        )  # fmt: skip
        assert str(error) == message


def test_a_model_and_keywords_together_is_a_type_error(served: Server) -> None:
    """judge(model, score=...) and route(dict, count=...) are TypeErrors saying why."""
    model = JudgmentRequest(agent_id="sim_a", contract_id="both", score=5)
    with Ladder(served.base, token=ORCH) as ladder:
        with pytest.raises(TypeError) as both:
            ladder.judge(model, score=6.0)
        with pytest.raises(TypeError, match="not both"):
            ladder.route({"task_type": "code"}, count=2)
        with pytest.raises(TypeError) as neither:
            ladder.judge(42)  # type: ignore[arg-type]  # wrong on purpose
    assert str(both.value) == (
        "give a JudgmentRequest (or a dict) or keyword arguments, not both: got a"
        " JudgmentRequest and the keywords score"
    )
    assert str(neither.value) == "expected a JudgmentRequest, a dict or keyword arguments, not int"


def test_async_keyword_dict_and_model_forms(served: Server) -> None:
    """AsyncLadder takes the same three forms and refuses the same way."""

    async def main() -> None:
        async with AsyncLadder(served.base, token=ADMIN) as ladder:
            contract = fresh("async")
            judged = await ladder.judge(agent_id="sim_b", contract_id=contract, score=6.5)
            assert not judged.duplicate
            again = await ladder.judge({"agent_id": "sim_b", "contract_id": contract,
                                        "score": 6.5})  # fmt: skip
            assert again.duplicate
            results = await ladder.judge_many(
                [{"agent_id": "sim_a", "contract_id": fresh("am"), "score": 4},
                 JudgmentRequest(agent_id="sim_a", contract_id=contract + "-m", score=4)]
            )  # fmt: skip
            assert [r.status for r in results] == ["imported", "imported"]
            assert len((await ladder.route(task_type="code")).agents) == 1
            agent = await ladder.heartbeat(name="kw_async", provider_id="acme")
            assert agent.name == "kw_async"
            with pytest.raises(InvalidInput) as refused:
                await ladder.route(task_type="code", cuont=2)  # type: ignore[call-arg]
            assert str(refused.value) == (
                "invalid_input: cuont: is not a field of RouteRequest (did you mean count?) (2)"
            )
            with pytest.raises(TypeError, match="not both"):
                await ladder.heartbeat(AgentConfig(name="kw_async"), provider_id="x")

    asyncio.run(main())
