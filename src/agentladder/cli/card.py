"""``agentladder card verify FILE|URL [--key PUBLIC.pem]``: checks an A2A agent card's
signatures (with ``--key``, else with the key its ``jku`` JWKS serves under its ``kid``)
and says how old its evidence is, one line per finding; exit 1 when it does not verify."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from agentladder.cli.commands import app
from agentladder.errors import InvalidInput
from agentladder.services.card.keys import jwk_key, load_public_key
from agentladder.services.card.verify import KeyLookup, verify_card

__all__ = ["card_verify"]

card_app = typer.Typer(help="A2A agent cards (docs/integrations.md).", no_args_is_help=True)
app.add_typer(card_app, name="card")

_TIMEOUT_S = 10.0


def _is_url(where: str) -> bool:
    return where.startswith(("http://", "https://"))


def _get_json(url: str, what: str) -> Any:
    try:
        response = httpx.get(url, timeout=_TIMEOUT_S, follow_redirects=True)
    except httpx.HTTPError as error:
        reason = f"cannot fetch it ({type(error).__name__}: {error})"
        raise InvalidInput(what, url, reason) from None
    if response.status_code != 200:
        raise InvalidInput(what, url, f"answered HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise InvalidInput(what, url, "did not answer JSON") from None


def _read_card(where: str) -> Any:
    if _is_url(where):
        return _get_json(where, "card")
    try:
        text = Path(where).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInput("card", where, f"cannot read it: {error.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise InvalidInput("card", where, f"not JSON ({error})") from None


def _fixed(path: Path) -> KeyLookup:
    try:
        pem = path.read_bytes()
    except OSError as error:
        raise InvalidInput("--key", str(path), f"cannot read it: {error.strerror}") from None
    key = load_public_key(pem)
    return lambda header: (key, f"key from --key {path}")


def _from_jku(header: dict[str, Any]) -> tuple[Any, str]:
    jku, kid = header.get("jku"), header.get("kid")
    if not isinstance(jku, str) or not _is_url(jku):
        raise ValueError("no --key and no http(s) jku in its protected header")
    try:
        keys = _get_json(jku, "jku").get("keys", [])
    except (InvalidInput, AttributeError) as error:
        raise ValueError(f"the JWKS at {jku}: {error}") from None
    for jwk in keys if isinstance(keys, list) else []:
        if isinstance(jwk, dict) and jwk.get("kid") == kid:
            return jwk_key(jwk), f"key from the card's own jku {jku}"
    raise ValueError(f"the JWKS at {jku} has no key {kid!r}")


@card_app.command("verify")
def card_verify(
    where: Annotated[str, typer.Argument(metavar="FILE|URL", help="The card: a file or URL.")],
    key: Annotated[
        Path | None,
        typer.Option("--key", help="The signer's PEM public key (default: the card's jku JWKS)."),
    ] = None,
) -> None:
    """Check an A2A agent card's signature and say how old its evidence is; exit 1 when
    it does not verify. Without --key the key comes from the card's own jku: that shows the
    card is the one that server signed, not who runs the server."""
    lookup = _fixed(key) if key is not None else _from_jku
    verdict = verify_card(_read_card(where), lookup)
    for line in verdict.findings:
        typer.echo(line)
    if key is None and verdict.verified:
        typer.echo("note: the key came from the card's own jku (pin it with --key)")
    typer.echo("verified" if verdict.verified else "NOT verified")
    if not verdict.verified:
        raise typer.Exit(1)
