"""An A2A agent card's JWS (A2A v1.0, section 8.4): ES256 over the RFC 8785 (JCS)
canonical form of the card without its ``signatures``, the payload detached.

The payload leaves out what the protocol's JSON form leaves out as a default value
(section 8.4.1): an extension's ``required: false``. The protected header holds ``alg``
ES256, ``typ`` JOSE, ``kid`` (the key's RFC 7638 thumbprint) and ``jku`` (the JWKS that
serves the public key), when known.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Protocol

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from agentladder.services.card.keys import b64url, b64url_decode, public_jwk

__all__ = ["CardSigner", "Es256Signer", "check_signature", "protected_header", "signing_payload"]

_COORDINATE = 32


class CardSigner(Protocol):
    """Gives a card its ``signatures``."""

    def sign(self, card: dict[str, Any], jku: str | None = None) -> dict[str, Any]:
        """The card with one signature more (``jku``: where the public key is served)."""
        ...


def signing_payload(card: dict[str, Any]) -> bytes:
    """The JCS canonical bytes of ``card`` without its ``signatures`` and defaults."""
    unsigned = {key: value for key, value in card.items() if key != "signatures"}
    capabilities = unsigned.get("capabilities")
    if isinstance(capabilities, dict) and isinstance(capabilities.get("extensions"), list):
        unsigned = copy.deepcopy(unsigned)
        for extension in unsigned["capabilities"]["extensions"]:
            if isinstance(extension, dict) and extension.get("required") is False:
                del extension["required"]
    return rfc8785.dumps(unsigned)


class Es256Signer:
    """Signs with an EC P-256 private key (ES256)."""

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self.key = key
        self.jwk = public_jwk(key.public_key())
        self.kid = self.jwk["kid"]

    def sign(self, card: dict[str, Any], jku: str | None = None) -> dict[str, Any]:
        header: dict[str, str] = {"alg": "ES256", "typ": "JOSE", "kid": self.kid}
        if jku is not None:
            header["jku"] = jku
        protected = b64url(json.dumps(header, separators=(",", ":")).encode())
        signing_input = f"{protected}.{b64url(signing_payload(card))}".encode("ascii")
        r, s = decode_dss_signature(self.key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        raw = r.to_bytes(_COORDINATE, "big") + s.to_bytes(_COORDINATE, "big")
        signature = {"protected": protected, "signature": b64url(raw)}
        return {**card, "signatures": [*card.get("signatures", []), signature]}


def protected_header(signature: object) -> dict[str, Any]:
    """The decoded protected header of one of a card's ``signatures`` (``ValueError``
    when it is not base64url JSON of an object)."""
    if not isinstance(signature, dict) or not isinstance(signature.get("protected"), str):
        raise ValueError("a signature without a 'protected' string")
    header = json.loads(b64url_decode(signature["protected"]))
    if not isinstance(header, dict):
        raise ValueError("the protected header is not a JSON object")
    return header


def check_signature(
    card: dict[str, Any], signature: dict[str, Any], key: ec.EllipticCurvePublicKey
) -> str | None:
    """Why ``signature`` does not verify ``card`` with ``key``, or None when it does."""
    try:
        header = protected_header(signature)
        raw = b64url_decode(signature.get("signature", ""))
    except ValueError as error:
        return f"malformed signature: {error}"
    if header.get("alg") != "ES256":
        return f"unsupported alg {header.get('alg')!r} (ES256 only)"
    if len(raw) != 2 * _COORDINATE:
        return f"an ES256 signature has 64 bytes, this one {len(raw)}"
    r = int.from_bytes(raw[:_COORDINATE], "big")
    s = int.from_bytes(raw[_COORDINATE:], "big")
    signing_input = f"{signature['protected']}.{b64url(signing_payload(card))}".encode("ascii")
    try:
        key.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "the signature does not match the card (changed after signing, or another key)"
    return None
