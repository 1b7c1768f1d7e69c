"""What a check of an agent card finds: each signature verified with the key found for
it, and how old the trust extension's evidence is; one line per finding (pure: the keys
are looked up by the caller's ``KeyLookup``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from agentladder.domain.card import TRUST_EXTENSION_URI
from agentladder.services.card.signing import check_signature, protected_header

__all__ = ["KeyLookup", "Verdict", "evidence_age", "trust_params_of", "verify_card"]

KeyLookup = Callable[[dict[str, Any]], tuple[ec.EllipticCurvePublicKey, str]]
"""The public key for a protected header, and where it came from (``ValueError`` with
the reason when none is found)."""


@dataclass
class Verdict:
    """Whether the card verifies, and the findings, one line each."""

    verified: bool = False
    findings: list[str] = field(default_factory=list)


def trust_params_of(card: dict[str, Any]) -> dict[str, Any] | None:
    """The params of agentladder's trust extension in ``card``, or None."""
    capabilities = card.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    for extension in extensions if isinstance(extensions, list) else []:
        if isinstance(extension, dict) and extension.get("uri") == TRUST_EXTENSION_URI:
            params = extension.get("params")
            return params if isinstance(params, dict) else {}
    return None


def _span(seconds: float) -> str:
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def evidence_age(params: dict[str, Any] | None, now: float) -> str:
    """The finding on the evidence's age (``as_of``) and issuer."""
    if params is None:
        return f"evidence: the card has no trust extension ({TRUST_EXTENSION_URI})"
    issuer = params.get("issuer")
    by = f" (issuer {issuer})" if isinstance(issuer, str) else ""
    as_of = params.get("as_of")
    if as_of is None:
        return f"evidence: not fitted yet (as_of null){by}"
    try:
        moment = datetime.fromisoformat(str(as_of).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return f"evidence: as_of {as_of!r} is not an RFC 3339 time{by}"
    return f"evidence: as of {as_of}, {_span(now - moment)} old{by}"


def _one(
    card: dict[str, Any], index: int, signature: object, lookup: KeyLookup
) -> tuple[bool, str]:
    """Whether one signature verifies, and the finding."""
    try:
        header = protected_header(signature)
        key, source = lookup(header)
    except ValueError as error:
        return False, f"signature {index}: cannot be checked ({error})"
    assert isinstance(signature, dict)  # protected_header checked it
    problem = check_signature(card, signature, key)
    kid = header.get("kid", "none")
    if problem is not None:
        return False, f"signature {index}: does not verify (kid {kid}, {source}): {problem}"
    return True, f"signature {index}: verifies (ES256, kid {kid}, {source})"


def verify_card(card: object, lookup: KeyLookup, now: float | None = None) -> Verdict:
    """Every signature of ``card`` checked (all must verify, and there must be one), and
    the age of its evidence."""
    verdict = Verdict()
    if not isinstance(card, dict):
        verdict.findings.append(f"card: not a JSON object ({type(card).__name__})")
        return verdict
    name = card.get("name")
    verdict.findings.append(f"card: {name!r}")
    signatures = card.get("signatures")
    params = trust_params_of(card)
    if not signatures:
        says = None if params is None else params.get("signed")
        said = "" if params is None else f" (its trust extension says signed: {says})"
        verdict.findings.append(f"unsigned: the card carries no signature{said}")
    elif not isinstance(signatures, list):
        verdict.findings.append("signatures: not a list")
    else:
        checked = [_one(card, i + 1, s, lookup) for i, s in enumerate(signatures)]
        verdict.findings.extend(line for _, line in checked)
        verdict.verified = all(ok for ok, _ in checked)
    verdict.findings.append(evidence_age(params, time.time() if now is None else now))
    return verdict
