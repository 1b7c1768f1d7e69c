"""``GET /agents/{id}/card`` and ``GET /.well-known/jwks.json`` over real services: the card
carries the agent's fitted evidence, validates against the A2A v1.0 schema, and its
signature verifies with the served public key; without a key it is unsigned and says so."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.api.card_out import AgentCardOut, JwksOut
from agentladder.config import parse_settings
from agentladder.services.card.keys import jwk_key
from agentladder.services.card.signing import check_signature, protected_header
from agentladder.services.container import Services
from tests.card.keys import KeyFiles
from tests.card.schema import card_problems
from tests.inprocess import call_app

ORCH = "orchestrator-token-0123456789"
AGENTS: list[dict[str, Any]] = [
    {"name": "sim_a", "description": "Audits contracts", "model_name": "sim-7",
     "capability_tags": ["audit", "code"], "backend": {"kind": "simulated", "quality": 7.5}},
    {"name": "sim_b", "backend": {"kind": "simulated", "quality": 6.0}},
]  # fmt: skip


def _config(key: str | None) -> dict[str, Any]:
    api: dict[str, Any] = {"tokens": [{"role": "orchestrator", "token": ORCH}]}
    if key is not None:
        api |= {"card_signing_key": key, "card_issuer": "https://ladder.example"}
    return {"agents": AGENTS, "api": api}


def _judgments() -> dict[str, Any]:
    items = [("sim_a", t, s) for t in ("audit", "code") for s in (8.0, 7.5, 9.0, 8.5) * 3]
    items += [("sim_b", "audit", s) for s in (5.0, 6.0, 5.5) * 4]
    return {"judgments": [
        {"agent_id": agent, "contract_id": f"c{i}", "task_type": task_type, "score": score,
         "new_agent": True, "judge": "gpt-4"}
        for i, (agent, task_type, score) in enumerate(items)
    ]}  # fmt: skip


def _params(card: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = card["capabilities"]["extensions"][0]["params"]
    return params


def test_the_served_card_carries_the_fitted_evidence_and_verifies(key_files: KeyFiles) -> None:
    """After judgments and a fit: the card's params hold sim_a's skill at both task types
    (the same intervals and counts as GET /agents/sim_a/skills), its XP and level as its
    profile says, as_of the fit; it validates, it is signed (header and params say so),
    its jku names the JWKS, whose key (by kid) verifies it."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        sent = await client.post(
            "/oracle/judgments/batch", json=_judgments(),
            headers={"authorization": f"Bearer {ORCH}"},
        )  # fmt: skip
        assert sent.status_code == 200, sent.text
        await services.skill.fit()
        answer = await client.get("/agents/sim_a/card")
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-agentladder-card"] == "signed"
        card = answer.json()
        assert card_problems(card) == []
        AgentCardOut.model_validate(card)  # the answer is what /openapi.json says
        params = _params(card)
        skills = (await client.get("/agents/sim_a/skills")).json()
        assert [(s["task_type"], s["observations"]) for s in params["skills"]] == [
            (s["task_type"], s["observations"]) for s in skills["task_types"]]  # fmt: skip
        assert [s["observations"] for s in params["skills"]] == [12, 12]
        for mine, theirs in zip(params["skills"], skills["task_types"], strict=True):
            assert abs(mine["low"] - theirs["low"]) < 1e-3
            assert abs(mine["high"] - theirs["high"]) < 1e-3
        profile = (await client.get("/oracle/profiles/sim_a")).json()
        assert (params["xp"], params["level"]) == (profile["xp"], profile["level"])
        assert params["xp"] > 0
        assert params["as_of"] is not None
        assert params["as_of"].endswith("Z")
        assert (params["issuer"], params["signed"]) == ("https://ladder.example", True)
        [signature] = card["signatures"]
        header = protected_header(signature)
        assert header["jku"] == "http://localhost/.well-known/jwks.json"
        served = JwksOut.model_validate((await client.get("/.well-known/jwks.json")).json())
        keys = [key.model_dump() for key in served.keys]
        [jwk] = [k for k in keys if k["kid"] == header["kid"]]
        assert check_signature(card, signature, jwk_key(jwk)) is None

    call_app(_config(str(key_files.private)), body)


def test_an_unsigned_card_says_so_and_an_unknown_agent_is_404() -> None:
    """Without api.card_signing_key: no signatures, params.signed false, header unsigned,
    the issuer the URL asked, no fit yet (as_of null, no skills); the JWKS is empty;
    an agent nobody registered: 404 offering the closest id."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        answer = await client.get("/agents/sim_b/card")
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-agentladder-card"] == "unsigned"
        card = answer.json()
        assert "signatures" not in card
        assert card_problems(card) == []
        AgentCardOut.model_validate(card)
        params = _params(card)
        assert (params["signed"], params["issuer"]) == (False, "http://localhost")
        assert (params["as_of"], params["skills"], params["overall"]) == (None, [], None)
        assert card["version"] == "unversioned"
        assert card["skills"] == []
        assert (await client.get("/.well-known/jwks.json")).json() == {"keys": []}
        missing = await client.get("/agents/sim_c/card")
        assert missing.status_code == 404
        assert "sim_" in missing.text

    call_app(_config(None), body)


def test_the_settings_keep_the_key_setting_as_given(key_files: KeyFiles) -> None:
    """The setting is the key's path, read once at load (and again by the server)."""
    settings = parse_settings(_config(str(key_files.private)))
    assert settings.api.card_signing_key == str(key_files.private)
    assert settings.api.card_issuer == "https://ladder.example"
