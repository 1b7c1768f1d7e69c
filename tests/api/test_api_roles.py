"""Every write endpoint checks the caller's role: agents never write standing or results."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import AGENT_A, bearer

WRITES: list[tuple[str, dict[str, Any]]] = [
    ("/deliberation", {"user_query": "q", "agent_names": ["sim_a", "sim_b"]}),
    ("/deliberations/results",
     {"deliberation_id": "x1", "rounds": [{"agents": {"sim_a": {"aggregated_score": 9}}}]}),
    ("/oracle/judgments", {"agent_id": "sim_a", "contract_id": "c1", "score": 10}),
    ("/oracle/sentinel/check", {"agent_id": "sim_a"}),
    ("/oracle/validations", {"agent_id": "sim_a", "contract_id": "c1", "passed": True}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body"), WRITES)
def test_an_agent_token_is_forbidden_and_no_token_unauthorized(
    api: Any, path: str, body: dict[str, Any]
) -> None:
    """Agent tokens get 403 and anonymous callers 401 on orchestrator writes; nothing stored."""

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        as_agent = await client.post(path, json=body, headers=bearer(AGENT_A))
        assert as_agent.status_code == 403, as_agent.text
        assert as_agent.json()["error"]["code"] == "forbidden"
        anonymous = await client.post(path, json=body)
        assert anonymous.status_code == 401
        assert await services.store.get_profile("sim_a") is None
        assert await services.store.list_deliberations() == []
        stats = await services.store.get_stats("sim_a")
        assert stats is None

    api(run)
