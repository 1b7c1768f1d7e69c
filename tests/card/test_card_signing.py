"""The card's assembly (pure) and its signature: the JWS verifies with the public key,
and any change of the card after signing breaks it; the payload is the RFC 8785 form
of the card without its signatures and defaults."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric import ec

from agentladder.domain.agents import AgentConfig
from agentladder.domain.card import TRUST_EXTENSION_URI, CardFacts, agent_card
from agentladder.domain.profile import AgentProfile, Probation, ProbationCause
from agentladder.domain.routing.health import AgentHealth, HealthStatus
from agentladder.domain.skill.board import SkillEntry
from agentladder.services.card.keys import b64url_decode, jwk_key, load_private_key, public_jwk
from agentladder.services.card.signing import Es256Signer, check_signature, signing_payload
from agentladder.services.card.verify import verify_card
from tests.card.keys import KeyFiles, write_key
from tests.card.schema import card_problems

FITTED_AT = 1_796_000_000.0


def _entry(task_type: str | None, skill: float, n: int) -> SkillEntry:
    return SkillEntry(
        agent_id="auditor", task_type=task_type, skill=skill, sd=0.4, low=skill - 0.8,
        high=skill + 0.8, observations=n, provisional=False,
    )  # fmt: skip


def facts(signed: bool = True) -> CardFacts:
    """An agent with evidence at two task types, on probation in one stream."""
    profile = AgentProfile(
        id="auditor", xp=240, level="reliable",
        probation={"code": Probation(cause=ProbationCause.MODEL_CHANGE, since=12, passes=2)},
    )  # fmt: skip
    return CardFacts(
        config=AgentConfig(
            name="auditor",
            description="Audits contracts",
            model_name="gpt-4o",
            capability_tags=("audit", "code", "audit"),
        ),
        profile=profile,
        health=AgentHealth(status=HealthStatus.OK, reason="no call yet", since=None),
        base_url="https://ladder.example/",
        issuer="https://ladder.example",
        signed=signed,
        fitted_at=FITTED_AT,
        overall=_entry(None, 7.25, 40),
        skills=(_entry("audit", 7.8, 25), _entry("code", 6.7, 15)),
    )


@pytest.fixture
def signer(key_files: KeyFiles) -> Es256Signer:
    return Es256Signer(load_private_key(str(key_files.private)))


def test_the_card_is_the_declaration_with_the_trust_extension() -> None:
    """Name, description, one skill per distinct capability tag, the model as version,
    the extension's params: per task type skill, interval and evidence count, level,
    XP, the probation stream, health, as_of in RFC 3339 and the issuer; it validates
    against the A2A v1.0 AgentCard schema."""
    card = agent_card(facts())
    assert card_problems(card) == []
    assert (card["name"], card["description"], card["version"]) == (
        "auditor", "Audits contracts", "gpt-4o")  # fmt: skip
    assert [s["id"] for s in card["skills"]] == ["audit", "code"]
    assert card["supportedInterfaces"][0]["url"] == "https://ladder.example/agents/auditor"
    [extension] = card["capabilities"]["extensions"]
    assert (extension["uri"], extension["required"]) == (TRUST_EXTENSION_URI, False)
    params = extension["params"]
    assert params["as_of"] == "2026-11-30T00:53:20Z"
    assert params["issuer"] == "https://ladder.example"
    assert [(s["task_type"], s["low"], s["skill"], s["high"], s["observations"])
            for s in params["skills"]] == [("audit", 7.0, 7.8, 8.6, 25),
                                           ("code", 5.9, 6.7, 7.5, 15)]  # fmt: skip
    assert params["overall"]["observations"] == 40
    assert (params["level"], params["xp"], params["signed"]) == ("reliable", 240, True)
    assert params["probation"] == [
        {"stream": "code", "cause": "model_change", "since": 12, "passes": 2}]  # fmt: skip
    assert params["health"]["status"] == "ok"


def test_a_signed_card_verifies_with_the_public_key(signer: Es256Signer) -> None:
    """One signature: protected header alg ES256, typ JOSE, kid the key's thumbprint, jku;
    it verifies with the public key (read back from its JWK), and the card still
    validates against the schema."""
    card = signer.sign(agent_card(facts()), jku="https://ladder.example/.well-known/jwks.json")
    assert card_problems(card) == []
    [signature] = card["signatures"]
    header = json.loads(b64url_decode(signature["protected"]))
    assert header == {"alg": "ES256", "typ": "JOSE", "kid": signer.kid,
                      "jku": "https://ladder.example/.well-known/jwks.json"}  # fmt: skip
    assert len(b64url_decode(signature["signature"])) == 64
    assert check_signature(card, signature, jwk_key(signer.jwk)) is None
    verdict = verify_card(card, lambda header: (jwk_key(signer.jwk), "test"), now=FITTED_AT + 7200)
    assert verdict.verified, verdict.findings
    assert "evidence: as of 2026-11-30T00:53:20Z, 2 h 0 min old" in verdict.findings[-1]


def test_the_payload_is_the_jcs_form_without_signatures_or_defaults(signer: Es256Signer) -> None:
    """The signed bytes are RFC 8785's canonical form of the card less ``signatures`` and
    the extension's default ``required: false`` (A2A v1.0, 8.4.1); the served card keeps
    ``required``, and signing does not change the card's other fields."""
    card = agent_card(facts())
    signed = signer.sign(card)
    expected = copy.deepcopy(card)
    del expected["capabilities"]["extensions"][0]["required"]
    assert signing_payload(signed) == rfc8785.dumps(expected)
    assert {k: v for k, v in signed.items() if k != "signatures"} == card
    assert signing_payload(signed).startswith(b'{"capabilities":{"extensions":[{"description"')


def _edit(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(card: dict[str, Any]) -> None:
        place = card
        for step in path[:-1]:
            place = place[step]
        place[path[-1]] = value

    return edit


PARAMS = ("capabilities", "extensions", 0, "params")
CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "name": _edit(("name",), "auditor2"),
    "description": _edit(("description",), "Audits contracts!"),
    "version": _edit(("version",), "gpt-4o-mini"),
    "a skill's interval": _edit((*PARAMS, "skills", 0, "low"), 6.9),
    "an evidence count": _edit((*PARAMS, "skills", 1, "observations"), 150),
    "the level": _edit((*PARAMS, "level"), "expert"),
    "the xp": _edit((*PARAMS, "xp"), 241),
    "as_of": _edit((*PARAMS, "as_of"), "2026-12-07T00:00:00Z"),
    "a probation dropped": _edit((*PARAMS, "probation"), []),
    "required made true": _edit(("capabilities", "extensions", 0, "required"), True),
    "a field added": _edit(("iconUrl",), "https://evil.example/icon.png"),
    "a skill dropped": lambda card: card["skills"].pop(),
    "the interface's url": _edit(("supportedInterfaces", 0, "url"), "https://evil.example/a"),
    "the header's kid": lambda card: card["signatures"][0].update(
        protected=card["signatures"][0]["protected"][:-2] + "xx"),
}  # fmt: skip


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_of_the_card_breaks_its_signature(signer: Es256Signer, change: str) -> None:
    """Each change of a signed card (a field, a number of the evidence, the header) fails
    verification with the right key."""
    card = signer.sign(agent_card(facts()))
    key = jwk_key(signer.jwk)
    assert check_signature(card, card["signatures"][0], key) is None
    CHANGES[change](card)
    assert check_signature(card, card["signatures"][0], key) is not None
    assert not verify_card(card, lambda header: (key, "test")).verified


def test_another_key_does_not_verify(signer: Es256Signer, tmp_path: Path) -> None:
    """The card verifies with its signer's key only."""
    card = signer.sign(agent_card(facts()))
    other = load_private_key(str(write_key(tmp_path, "other").private)).public_key()
    problem = check_signature(card, card["signatures"][0], other)
    assert problem is not None
    assert "does not match" in problem


def test_an_unsigned_card_says_so() -> None:
    """Without a key the card has no ``signatures``, its params say ``signed: false``,
    it validates against the schema, and a check finds it unsigned (not verified)."""
    card = agent_card(facts(signed=False))
    assert "signatures" not in card
    assert card["capabilities"]["extensions"][0]["params"]["signed"] is False
    assert card_problems(card) == []
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    verdict = verify_card(card, lambda header: (key, "test"))
    assert not verdict.verified
    assert "unsigned: the card carries no signature (its trust extension says signed: False)" in (
        verdict.findings
    )


def test_the_jwk_is_the_public_key_with_its_thumbprint(signer: Es256Signer) -> None:
    """The JWK names P-256 and the RFC 7638 thumbprint as kid; read back, it is the key."""
    jwk = public_jwk(signer.key.public_key())
    assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["kid"]) == ("EC", "P-256", "ES256", signer.kid)
    assert jwk_key(jwk).public_numbers() == signer.key.public_key().public_numbers()
