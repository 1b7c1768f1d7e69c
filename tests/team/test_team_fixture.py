"""The team fixture itself, served: the client's token reaches the gateway with its
budget, ``steady`` answers, ``stream`` streams, the roles are kept apart."""

from __future__ import annotations

import openai

from tests.team.conftest import TOKENS, Team


def test_the_client_calls_the_gateway_and_the_stream_agent_streams(team: Team) -> None:
    """Through the official client with the client's token: ``steady`` answers at once,
    ``stream`` streams its answer in pieces; the client may not start a deliberation and
    the orchestrator may."""
    client = openai.OpenAI(
        base_url=team.server.url("/v1"), api_key=TOKENS["client"], max_retries=0, timeout=30
    )
    answered = client.chat.completions.create(
        model="steady", messages=[{"role": "user", "content": "hello"}]
    )
    assert answered.choices[0].message.content == "answer from steady"
    pieces = [
        chunk.choices[0].delta.content or ""
        for chunk in client.chat.completions.create(
            model="stream", messages=[{"role": "user", "content": "hello"}], stream=True
        )
        if chunk.choices
    ]
    assert len([p for p in pieces if p]) == 2
    assert "".join(pieces) == "answer from stream"
    body = {"user_query": "q", "agent_names": ["steady", "stream"], "scope": "quick"}
    assert team.post("/deliberation", body, role="client").status_code == 403
    assert team.post("/deliberation", body, role="orchestrator").status_code == 202
