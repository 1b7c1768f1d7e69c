"""``agentladder card verify`` against a real ``agentladder serve``: the served card by URL
(key from its jku JWKS, or --key), the same card saved to a file, the file changed, the
wrong key, an unsigned server's card; one line per finding, exit 1 when it does not
verify."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from typer.testing import CliRunner

from agentladder.cli import app
from tests.card.keys import KeyFiles, write_key
from tests.served import start_server

runner = CliRunner()

AGENTS = """
agents:
  - name: sim_a
    description: Audits contracts
    capability_tags: [audit]
    backend: {kind: simulated, quality: 7.5}
"""


def _verify(*args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["card", "verify", *args])
    return result.exit_code, result.output.splitlines()


def test_verify_a_served_card_by_url_and_as_a_file(tmp_path: Path, key_files: KeyFiles) -> None:
    """A signed card verifies by URL (key from the card's jku, with a note saying so) and
    with --key; saved to a file it verifies with --key, changed it does not, nor with
    another key; each run says how old the evidence is (none fitted yet)."""
    config = AGENTS + f"api:\n  card_signing_key: {key_files.private}\n"
    server = start_server(tmp_path, config)
    try:
        url = server.url("/agents/sim_a/card")
        code, lines = _verify(url)
        assert code == 0, lines
        assert lines[0] == "card: 'sim_a'"
        assert lines[1].startswith("signature 1: verifies (ES256, kid ")
        assert f"key from the card's own jku {server.url('/.well-known/jwks.json')}" in lines[1]
        assert lines[2].startswith(
            "evidence: not fitted yet (as_of null) (issuer http://127.0.0.1:"
        )
        assert lines[-2:] == ["note: the key came from the card's own jku (pin it with --key)",
                              "verified"]  # fmt: skip
        code, lines = _verify(url, "--key", str(key_files.public))
        assert code == 0, lines
        assert f"key from --key {key_files.public}" in lines[1]
        saved = tmp_path / "card.json"
        saved.write_text(httpx.get(url).text)
    finally:
        server.stop()
    code, lines = _verify(str(saved), "--key", str(key_files.public))
    assert (code, lines[-1]) == (0, "verified"), lines
    card = json.loads(saved.read_text())
    card["capabilities"]["extensions"][0]["params"]["xp"] = 9999
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(card))
    code, lines = _verify(str(changed), "--key", str(key_files.public))
    assert code == 1
    assert "does not verify" in lines[1]
    assert "does not match the card" in lines[1]
    assert lines[-1] == "NOT verified"
    other = write_key(tmp_path, "other")
    code, lines = _verify(str(saved), "--key", str(other.public))
    assert (code, lines[-1]) == (1, "NOT verified")


def test_an_unsigned_card_and_mistakes_exit_1(tmp_path: Path) -> None:
    """A server without a key serves an unsigned card: verify says unsigned, exit 1; a
    missing file and a key file that is no key: one line each, exit 1."""
    server = start_server(tmp_path, AGENTS)
    try:
        code, lines = _verify(server.url("/agents/sim_a/card"))
    finally:
        server.stop()
    assert code == 1
    assert "unsigned: the card carries no signature (its trust extension says signed: False)" in (
        lines
    )
    assert lines[-1] == "NOT verified"
    code, lines = _verify(str(tmp_path / "absent.json"))
    assert code == 1
    assert lines[-1].startswith("error: card: cannot read it")
    card = tmp_path / "card.json"
    card.write_text("{}")
    not_a_key = tmp_path / "key.pem"
    not_a_key.write_text("nothing\n")
    code, lines = _verify(str(card), "--key", str(not_a_key))
    assert code == 1
    assert lines[-1] == "error: --key: not a PEM public (or private) key ('PEM')"
