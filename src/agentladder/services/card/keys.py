"""The card signing key of ``api.card_signing_key``: a PEM EC P-256 private key, read from
a file (the value is its path) or from an environment variable (``env:NAME``); and the
public key as a JWK (RFC 7517) with its RFC 7638 thumbprint as ``kid``."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

from agentladder.errors import InvalidInput

__all__ = [
    "ENV_PREFIX",
    "b64url",
    "b64url_decode",
    "jwk_key",
    "jwk_thumbprint",
    "load_private_key",
    "load_public_key",
    "public_jwk",
]

ENV_PREFIX = "env:"
_FIELD = "api.card_signing_key"


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515, section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The bytes of unpadded base64url ``text`` (``ValueError`` when it is not)."""
    if not isinstance(text, str) or "=" in text:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _pem_of(value: str, field: str) -> bytes:
    if value.startswith(ENV_PREFIX):
        name = value.removeprefix(ENV_PREFIX)
        found = os.environ.get(name)
        if not found:
            raise InvalidInput(field, value, f"the environment variable {name} is not set")
        return found.encode()
    path = Path(value)
    try:
        return path.read_bytes()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InvalidInput(field, value, f"cannot read the key file: {reason}") from None


def load_private_key(value: str, field: str = _FIELD) -> ec.EllipticCurvePrivateKey:
    """The EC P-256 private key that ``value`` names (a PEM file's path, or ``env:NAME``);
    ``InvalidInput`` naming ``field`` when it cannot be read or is another kind of key."""
    pem = _pem_of(value, field)
    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InvalidInput(field, value, f"not an unencrypted PEM private key ({first})") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        kind = getattr(getattr(key, "curve", None), "name", type(key).__name__)
        raise InvalidInput(field, value, f"must be an EC P-256 key for ES256, not {kind}")
    return key


def load_public_key(pem: bytes, field: str = "--key") -> ec.EllipticCurvePublicKey:
    """An EC P-256 public key from PEM (a private key's PEM gives its public key)."""
    try:
        key: object = load_pem_public_key(pem)
    except ValueError:
        try:
            key = load_pem_private_key(pem, password=None).public_key()
        except (ValueError, TypeError):
            raise InvalidInput(field, "PEM", "not a PEM public (or private) key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise InvalidInput(field, type(key).__name__, "must be an EC P-256 key (ES256)")
    return key


def public_jwk(key: ec.EllipticCurvePublicKey) -> dict[str, str]:
    """The public key as a JWK: kty, crv, x, y, with its thumbprint as ``kid``, ``use``
    ``sig`` and ``alg`` ES256."""
    numbers = key.public_numbers()
    core = {
        "crv": "P-256",
        "kty": "EC",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }
    return {**core, "kid": jwk_thumbprint(core), "use": "sig", "alg": "ES256"}


def jwk_thumbprint(jwk: dict[str, str]) -> str:
    """The RFC 7638 thumbprint (SHA-256) of an EC JWK's required members."""
    members = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return b64url(hashlib.sha256(canonical).digest())


def jwk_key(jwk: object) -> ec.EllipticCurvePublicKey:
    """The EC P-256 public key of a JWK (``ValueError`` when it is not one)."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise ValueError("not an EC P-256 JWK")
    x = int.from_bytes(b64url_decode(jwk.get("x", "")), "big")
    y = int.from_bytes(b64url_decode(jwk.get("y", "")), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
