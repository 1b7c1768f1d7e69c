"""``GET /agents/{agent_id}/card``: the agent's A2A v1.0 AgentCard with agentladder's trust
extension (``domain/card.py``), signed with ``api.card_signing_key`` when one is
configured (``services/card/signing.py``); ``GET /.well-known/jwks.json``: the public key
its signatures verify with (docs/integrations.md, "A2A agent card")."""

from __future__ import annotations

import functools
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agentladder.api.card_out import AgentCardOut, JwksOut
from agentladder.api.deps import ServicesDep
from agentladder.domain.card import CardFacts, agent_card
from agentladder.errors import NotFound
from agentladder.services.card.keys import load_private_key
from agentladder.services.card.signing import Es256Signer
from agentladder.services.container import Services
from agentladder.services.oracle.known import not_found

__all__ = ["JWKS_PATH", "SIGNED_HEADER", "router", "signer_of"]

router = APIRouter(tags=["agents"])

JWKS_PATH = "/.well-known/jwks.json"
SIGNED_HEADER = "X-Agentladder-Card"
"""``signed`` or ``unsigned``: whether the card served carries a signature."""


@functools.lru_cache(maxsize=4)
def signer_of(setting: str) -> Es256Signer:
    """The signer of an ``api.card_signing_key`` value (read once, checked at load)."""
    return Es256Signer(load_private_key(setting))


def _signer(services: Services) -> Es256Signer | None:
    setting = services.settings.api.card_signing_key
    return None if setting is None else signer_of(setting)


async def _facts(services: Services, agent_id: str, base: str, signed: bool) -> CardFacts:
    try:
        view = await services.registry.get(agent_id)
    except NotFound:
        raise await not_found("agent", agent_id, services.oracle.known) from None
    fleet = await services.store.get_fleet_skill()
    try:
        found = await services.skill.of_agent(agent_id)
        overall, skills = found.overall, tuple(found.task_types)
    except NotFound:
        overall, skills = None, ()
    return CardFacts(
        config=view.registration.config,
        profile=await services.oracle.get_profile(agent_id),
        health=services.health.health(agent_id),
        base_url=base,
        issuer=services.settings.api.card_issuer or base,
        signed=signed,
        fitted_at=(await services.skill.freshness(fleet)).fitted_at,
        overall=overall,
        skills=skills,
    )


@router.get("/agents/{agent_id}/card", response_model=AgentCardOut, response_model_by_alias=True)
async def card(services: ServicesDep, agent_id: str, request: Request) -> JSONResponse:
    """The agent's A2A AgentCard, with agentladder's trust extension; signed (ES256, JWS
    over its RFC 8785 form) when ``api.card_signing_key`` is set, else unsigned and says
    so (``params.signed`` false, header ``X-Agentladder-Card: unsigned``). 404 for an
    agent that never heartbeated."""
    base = str(request.base_url).rstrip("/")
    signer = _signer(services)
    built = agent_card(await _facts(services, agent_id, base, signer is not None))
    if signer is not None:
        built = signer.sign(built, jku=base + JWKS_PATH)
    state = "signed" if signer is not None else "unsigned"
    return JSONResponse(built, headers={SIGNED_HEADER: state})


@router.get(JWKS_PATH, response_model=JwksOut)
async def jwks(services: ServicesDep) -> dict[str, Any]:
    """The public key of ``api.card_signing_key`` as a JWK Set (no keys when none is set)."""
    signer = _signer(services)
    return {"keys": [] if signer is None else [signer.jwk]}
