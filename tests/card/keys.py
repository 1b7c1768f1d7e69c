"""Keys for the card tests: a fresh EC key pair written as PEM files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["KeyFiles", "write_key"]


@dataclass(frozen=True)
class KeyFiles:
    """A private key's PEM file and its public key's."""

    private: Path
    public: Path


def write_key(folder: Path, name: str = "card", curve: ec.EllipticCurve | None = None) -> KeyFiles:
    """A new EC key (P-256 unless ``curve``) as ``name.pem`` and ``name.pub.pem``."""
    key = ec.generate_private_key(curve or ec.SECP256R1())
    private = folder / f"{name}.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = folder / f"{name}.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return KeyFiles(private, public)
