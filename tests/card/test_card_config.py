"""``api.card_signing_key``: a PEM EC P-256 private key's path or ``env:NAME``; anything
else is refused when the configuration loads, in one line naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.config import parse_settings
from agentladder.errors import InvalidInput
from tests.card.keys import KeyFiles, write_key

runner = CliRunner()


def _refusal(value: str) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"api": {"card_signing_key": value}})
    assert caught.value.field == "api.card_signing_key"
    return caught.value.reason


def test_a_p256_key_by_path_or_environment_loads(
    key_files: KeyFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path of the PEM file, or env:NAME holding the PEM itself."""
    assert parse_settings({"api": {"card_signing_key": str(key_files.private)}})
    monkeypatch.setenv("CARD_KEY_PEM", key_files.private.read_text())
    settings = parse_settings({"api": {"card_signing_key": "env:CARD_KEY_PEM"}})
    assert settings.api.card_signing_key == "env:CARD_KEY_PEM"


def test_bad_keys_are_refused_in_one_line(
    tmp_path: Path, key_files: KeyFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing file, an unset variable, a file that is no key, a public key, a key on
    another curve: each refused with its reason."""
    assert "cannot read the key file" in _refusal(str(tmp_path / "absent.pem"))
    monkeypatch.delenv("CARD_KEY_UNSET", raising=False)
    assert _refusal("env:CARD_KEY_UNSET") == "the environment variable CARD_KEY_UNSET is not set"
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key\n")
    assert _refusal(str(garbage)).startswith("not an unencrypted PEM private key")
    assert _refusal(str(key_files.public)).startswith("not an unencrypted PEM private key")
    p384 = write_key(tmp_path, "p384", ec.SECP384R1())
    assert _refusal(str(p384.private)) == "must be an EC P-256 key for ES256, not secp384r1"


def test_config_check_says_it_in_one_line(tmp_path: Path) -> None:
    """``agentladder config check`` of a config naming a missing key: one line, exit 1."""
    config = tmp_path / "agents.yaml"
    config.write_text(f"api:\n  card_signing_key: {tmp_path / 'absent.pem'}\n")
    result = runner.invoke(app, ["config", "check", str(config)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1
    assert lines[0].startswith("error: api.card_signing_key: cannot read the key file")
