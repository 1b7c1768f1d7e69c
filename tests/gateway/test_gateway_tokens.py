"""The gateway's 401s and 403s through OpenAI's own client: no token, a token matching
none and a role that may not each say which, in OpenAI's error shape."""

from __future__ import annotations

import httpx
import openai
import pytest

from agentladder.api.auth import NO_MATCH
from tests.gateway.conftest import ORCH
from tests.served import Server

ASK = [{"role": "user", "content": "hello"}]
WRONG = "sk-not-a-configured-token-0123456789"


def test_the_gateway_tells_no_token_a_wrong_one_and_a_wrong_role(gateway: Server) -> None:
    """A POST without a token: 401 naming the client role (refused before its body was
    read); a wrong key through OpenAI's client: AuthenticationError saying it matches no
    configured token, the key not echoed; an orchestrator's: PermissionDeniedError naming
    the roles that may and its own."""
    bare = httpx.post(gateway.url("/v1/chat/completions"), json={"model": "alpha",
                      "messages": ASK}, timeout=10)  # fmt: skip
    assert bare.status_code == 401
    assert bare.json()["error"] == {
        "message": "POST /v1/chat/completions needs a bearer token (role client or admin);"
        " send 'Authorization: Bearer <token>'",
        "type": "authentication_error",
        "param": None,
        "code": "unauthorized",
    }
    wrong = openai.OpenAI(base_url=gateway.url("/v1"), api_key=WRONG, max_retries=0)
    orchestrator = openai.OpenAI(base_url=gateway.url("/v1"), api_key=ORCH, max_retries=0)
    try:
        with pytest.raises(openai.AuthenticationError) as unknown:
            wrong.chat.completions.create(model="alpha", messages=ASK)  # type: ignore[arg-type]
        with pytest.raises(openai.PermissionDeniedError) as forbidden:
            orchestrator.chat.completions.create(model="alpha", messages=ASK)  # type: ignore[arg-type]
        with pytest.raises(openai.PermissionDeniedError) as listing:
            orchestrator.models.list()
    finally:
        wrong.close()
        orchestrator.close()
    assert isinstance(unknown.value.body, dict)
    assert unknown.value.body["message"] == NO_MATCH
    assert unknown.value.body["type"] == "authentication_error"
    assert WRONG not in str(unknown.value)
    assert isinstance(forbidden.value.body, dict)
    assert forbidden.value.body["message"] == (
        "POST /v1/chat/completions needs role client or admin; this token's role is orchestrator"
    )
    assert forbidden.value.body["type"] == "permission_error"
    assert isinstance(listing.value.body, dict)
    assert listing.value.body["message"] == (
        "GET /v1/models needs role client or admin; this token's role is orchestrator"
    )
