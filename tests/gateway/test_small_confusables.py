"""The gateway's feedback refuses a contract id that looks like another (a Cyrillic
letter, a fullwidth one), naming the character, against a served gateway; the real
contract's feedback is then taken as the first."""

from __future__ import annotations

import httpx

from tests.gateway.conftest import CLIENT
from tests.served import Server

ASK = [{"role": "user", "content": "Which controls matter most?"}]
HOMOGLYPHS = {"a": "\u0430", "c": "\u0441", "e": "\u0435"}
"""Latin hex letters and their Cyrillic look-alikes."""


def _lookalike(contract: str) -> str:
    """``contract`` with its first hex letter a, c or e written in Cyrillic (else a
    Cyrillic a, U+0430, put at its end)."""
    for position, char in enumerate(contract[3:], start=3):
        if char in HOMOGLYPHS:
            return contract[:position] + HOMOGLYPHS[char] + contract[position + 1 :]
    return contract + HOMOGLYPHS["a"]


def test_feedback_refuses_a_look_alike_contract_id(gateway: Server) -> None:
    """Feedback on a Cyrillic or fullwidth look-alike of a real contract id is 422
    ``invalid_value`` with ``param`` contract_id and the character named; nothing is
    judged, so the real contract's feedback that follows is not a duplicate."""
    headers = {"Authorization": f"Bearer {CLIENT}"}
    with httpx.Client(base_url=gateway.base, headers=headers, timeout=30) as http:
        answer = http.post("/v1/chat/completions", json={"model": "alpha", "messages": ASK})
        assert answer.status_code == 200, answer.text
        contract = answer.headers["x-agentladder-contract"]
        for spoof, code_point in (
            (_lookalike(contract), "CYRILLIC SMALL LETTER"),
            ("\uff47" + contract[1:], "U+FF47 FULLWIDTH LATIN SMALL LETTER G"),
        ):
            refused = http.post("/v1/feedback", json={"contract_id": spoof, "thumbs": "down"})
            assert refused.status_code == 422, refused.text
            error = refused.json()["error"]
            assert (error["code"], error["param"]) == ("invalid_value", "contract_id")
            assert error["message"].startswith("contract_id: holds U+")
            assert code_point in error["message"]
            assert "\n" not in error["message"]
        given = http.post("/v1/feedback", json={"contract_id": contract, "thumbs": "up"})
        assert given.status_code == 200, given.text
        assert (given.json()["score"], given.json()["duplicate"]) == (10.0, False)
