"""The team's typos, served: each entry point where an agent id or a task type is typed
offers the closest known one (deliberations, profiles, routes, the gateway's model
names), and a task type nobody has evidence at says so while routing still answers."""

from __future__ import annotations

import openai
import pytest

from agentladder.client import Ladder, NotFound
from tests.team.conftest import TOKENS, Team

ASK = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def judged(team: Team) -> Team:
    """The team with judged work at ``summaries`` by ``steady`` and ``stream``."""
    for number, agent in enumerate(("steady", "stream")):
        body = {"agent_id": agent, "contract_id": f"typo-{number}", "task_type": "summaries",
                "score": 7.0 + number}  # fmt: skip
        assert team.post("/oracle/judgments", body).status_code == 200
    return team


def test_a_deliberation_naming_a_typo_is_refused_with_the_closest_agent(judged: Team) -> None:
    """``stedy``: 422 on ``agent_names`` offering steady, nothing started."""
    body = {"user_query": "q", "agent_names": ["stedy", "stream"], "scope": "quick"}
    refused = judged.post("/deliberation", body)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "agent_names"
    assert "did you mean steady?" in error["message"]
    assert "steady" in error["suggestions"]
    assert judged.get("/deliberations").json()["deliberations"] == []


def test_a_profile_typo_offers_the_agent(judged: Team) -> None:
    """``profile("stedy")`` through the client: NotFound, its message and suggestions."""
    with Ladder(judged.server.url("")) as ladder, pytest.raises(NotFound) as missing:
        ladder.profile("stedy")
    assert "did you mean steady?" in str(missing.value)
    assert "steady" in missing.value.suggestions


def test_a_route_at_a_task_type_nobody_has_answers_and_says_so(judged: Team) -> None:
    """``sumaries``: routed on priors, with a warning that no evidence exists there and the
    closest task type; ``summaries``: no warning."""
    typed = judged.post("/route", {"task_type": "sumaries", "count": 1})
    assert typed.status_code == 200, typed.text
    (warning,) = typed.json()["warnings"]
    assert "no agent has evidence at task type 'sumaries'" in warning
    assert warning.endswith("did you mean summaries?")
    assert len(typed.json()["agents"]) == 1
    known = judged.post("/route", {"task_type": "summaries", "count": 1})
    assert known.json()["warnings"] == []


def test_the_gateway_offers_the_closest_model_name(judged: Team) -> None:
    """Through the official client: ``model: stedy`` is 404 model_not_found saying did you
    mean steady; ``route:summaries:cheapest_above`` without a floor is 400 saying how."""
    client = openai.OpenAI(
        base_url=judged.server.url("/v1"), api_key=TOKENS["client"], max_retries=0, timeout=30
    )
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="stedy", messages=ASK)  # type: ignore[arg-type]
    assert isinstance(missing.value.body, dict)
    assert missing.value.body["code"] == "model_not_found"
    assert "did you mean steady?" in missing.value.body["message"]
    with pytest.raises(openai.BadRequestError) as floorless:
        client.chat.completions.create(
            model="route:summaries:cheapest_above",
            messages=ASK,  # type: ignore[arg-type]
        )
    assert isinstance(floorless.value.body, dict)
    assert "cheapest_above needs a floor" in floorless.value.body["message"]
