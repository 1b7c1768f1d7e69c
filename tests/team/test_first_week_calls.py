"""The team's first calls from Python, served: the client called with keywords and dicts
as SDKs are, and each token mistake told apart, with the message that says what works.

The team's server is the one a new team starts (``conftest.py``): six agents, tokens for
admin, orchestrator and client from the environment.
"""

from __future__ import annotations

import pytest

from agentladder.client import Forbidden, InvalidInput, JudgmentRequest, Ladder, Unauthorized
from tests.team.conftest import TOKENS, Team


def test_the_client_takes_keywords_dicts_and_models(team: Team) -> None:
    """``judge`` with keywords, ``judge_many`` with dicts and a model mixed, ``route``
    with keywords and count 1: each is stored or answered, as the typed form would be."""
    with Ladder(team.server.url(""), token=TOKENS["orchestrator"]) as ladder:
        judged = ladder.judge(
            agent_id="steady", contract_id="week-1", task_type="summaries", score=8.0
        )
        assert (judged.agent_id, judged.task_type, judged.score) == ("steady", "summaries", 8.0)
        assert judged.xp_awarded >= 10

        many = ladder.judge_many(
            [
                {"agent_id": "stream", "contract_id": "week-2", "task_type": "summaries",
                 "score": 7.0},
                JudgmentRequest(agent_id="slow", contract_id="week-3", task_type="summaries",
                                score=6.5),
            ]
        )  # fmt: skip
        assert [(item.status, item.agent_id) for item in many] == [
            ("imported", "stream"),
            ("imported", "slow"),
        ]

        routed = ladder.route(task_type="summaries", count=1)
        assert routed.task_type == "summaries"
        assert len(routed.agents) == 1

        with pytest.raises(InvalidInput) as refused:
            ladder.judge(agent_id="steady", contract_id="week-4", score="eight")  # type: ignore[arg-type]
        assert refused.value.status is None  # refused before anything was sent
        assert refused.value.field == "score"
        assert "'eight'" in str(refused.value)
        with pytest.raises(TypeError, match="not both"):
            ladder.judge(
                JudgmentRequest(agent_id="steady", contract_id="week-5", score=5.0),
                score=6.0,
            )
    assert team.get("/oracle/profiles/steady").json()["stats"]["total_tasks"] >= 1


def test_no_token_a_wrong_token_and_the_wrong_role_each_say_what_works(team: Team) -> None:
    """A judgment without a token names the roles that may and how to send one; a token
    matching none says so (never echoing it); the client's token names the roles and
    its own; the orchestrator's is taken."""
    judgment = {"agent_id": "steady", "contract_id": "week-tokens", "score": 7.0}
    with Ladder(team.server.url("")) as nobody, pytest.raises(Unauthorized) as missing:
        nobody.judge(judgment)
    said = str(missing.value)
    assert "needs a bearer token (role orchestrator or admin)" in said
    assert "Ladder(url, token=...)" in said

    wrong = "not-a-team-token-0123456789"
    with (
        Ladder(team.server.url(""), token=wrong) as stranger,
        pytest.raises(Unauthorized) as unmatched,
    ):
        stranger.judge(judgment)
    assert "matches no configured token" in str(unmatched.value)
    assert wrong not in str(unmatched.value)

    with (
        Ladder(team.server.url(""), token=TOKENS["client"]) as client,
        pytest.raises(Forbidden) as role,
    ):
        client.judge(judgment)
    assert "needs role orchestrator or admin" in str(role.value)
    assert "this token's role is client" in str(role.value)

    with Ladder(team.server.url(""), token=TOKENS["orchestrator"]) as orchestrator:
        assert orchestrator.judge(judgment).agent_id == "steady"
