"""An agent's A2A v1.0 AgentCard, assembled from what agentladder knows of it (pure).

The card is the agent's declaration (name, description, capability tags as skills) with
agentladder's trust extension in ``capabilities.extensions``: the agent's skill per task
type with its 95% interval and evidence count, its level, XP, probation streams and
health, when the skill was fitted (``as_of``) and who says so (``issuer``). Signing is
``services/card/signing.py``; the extension's params are documented in
docs/integrations.md ("A2A agent card").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agentladder.domain.agents import AgentConfig
from agentladder.domain.profile import AgentProfile
from agentladder.domain.routing.health import AgentHealth
from agentladder.domain.skill.board import SkillEntry

__all__ = [
    "A2A_PROTOCOL_VERSION",
    "TRUST_EXTENSION_URI",
    "UNVERSIONED",
    "CardFacts",
    "agent_card",
    "as_of_text",
]

A2A_PROTOCOL_VERSION = "1.0"
TRUST_EXTENSION_URI = "https://agentladder.dev/a2a/trust/v1"
"""The trust extension's URI: its params are version 1 (a change that drops or
redefines a param is a new URI)."""
UNVERSIONED = "unversioned"
"""The card's ``version`` of an agent that declares no model."""
TEXT = "text/plain"
_PLACES = 4


@dataclass(frozen=True)
class CardFacts:
    """What the card is made of: the agent's declaration, its skill as last fitted
    (``overall`` None and no ``skills`` for an agent without evidence), its profile and
    health, when the skill was fitted (seconds since the epoch, None before any fit),
    the issuer, the API's base URL and whether the card will be signed."""

    config: AgentConfig
    profile: AgentProfile
    health: AgentHealth
    base_url: str
    issuer: str
    signed: bool
    fitted_at: float | None = None
    overall: SkillEntry | None = None
    skills: Sequence[SkillEntry] = field(default_factory=tuple)


def as_of_text(fitted_at: float | None) -> str | None:
    """A fit's time as RFC 3339 UTC to the second (``2026-12-07T15:04:05Z``)."""
    if fitted_at is None:
        return None
    moment = datetime.fromtimestamp(fitted_at, tz=UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def _skill(entry: SkillEntry) -> dict[str, Any]:
    return {
        "task_type": entry.task_type,
        "skill": round(entry.skill, _PLACES),
        "low": round(entry.low, _PLACES),
        "high": round(entry.high, _PLACES),
        "observations": entry.observations,
        "provisional": entry.provisional,
    }


def _probation(streams: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {"stream": name, "cause": str(p.cause), "since": p.since, "passes": p.passes}
        for name, p in sorted(streams.items())
    ]


def trust_params(facts: CardFacts) -> dict[str, Any]:
    """The trust extension's ``params``."""
    health = facts.health
    return {
        "issuer": facts.issuer,
        "agent_id": facts.config.name,
        "as_of": as_of_text(facts.fitted_at),
        "scale": "0-10",
        "overall": None if facts.overall is None else _skill(facts.overall),
        "skills": [_skill(entry) for entry in facts.skills],
        "level": str(facts.profile.level),
        "xp": facts.profile.xp,
        "probation": _probation(facts.profile.probation),
        "health": {"status": str(health.status), "reason": health.reason},
        "signed": facts.signed,
    }


def _card_skill(tag: str, agent: str) -> dict[str, Any]:
    return {
        "id": tag,
        "name": tag,
        "description": f"{agent} declares the capability {tag!r} to agentladder",
        "tags": [tag],
    }


def agent_card(facts: CardFacts) -> dict[str, Any]:
    """The AgentCard (A2A v1.0's JSON form, camelCase), without ``signatures``."""
    config = facts.config
    base = facts.base_url.rstrip("/")
    return {
        "name": config.name,
        "description": config.description or f"{config.name}, an agent known to agentladder",
        "supportedInterfaces": [
            {
                "url": f"{base}/agents/{config.name}",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": A2A_PROTOCOL_VERSION,
            }
        ],
        "version": config.model_name or UNVERSIONED,
        "capabilities": {
            "extensions": [
                {
                    "uri": TRUST_EXTENSION_URI,
                    "description": "agentladder's evidence of this agent's skill and"
                    " standing, as of its last fit",
                    "required": False,
                    "params": trust_params(facts),
                }
            ]
        },
        "defaultInputModes": [TEXT],
        "defaultOutputModes": [TEXT],
        "skills": [_card_skill(tag, config.name) for tag in dict.fromkeys(config.capability_tags)],
    }
