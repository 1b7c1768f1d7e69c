"""Which errors each operation can answer, for the OpenAPI document.

Every operation lists only the statuses it can return (``docs/api.md``, "Errors"),
in the one error shape. What holds for every request is in all of them: 400 for two
``Authorization`` headers or a ``Host`` (a write's ``Origin``) not allowed. Every write
(POST) is authenticated before its body is read (401), checked for its role (403),
bounded (413; 429 past its token's share of the bodies being received), must be JSON
(415) and is validated (422). The rest is per operation: 404
where something named can be unknown, 409 where an id can come again with another
payload, 429 for the long poll, 503 where the store is read (and for ``busy``). Refusals
of the connection itself (408, 431, 503 ``too_many_connections``), and the 429 of a
token's rate or requests in flight where its role or the token sets them, come before
any route and are documented under "Limits".
A test checks that every operation of the app is listed here.
"""

from __future__ import annotations

__all__ = ["ERRORS", "ERROR_STATUSES"]

ERROR_STATUSES = {
    "400": "bad_request: two Authorization headers; for a write, a body that is not JSON,"
    " nested too deep or naming a key twice; host_not_allowed, origin_not_allowed",
    "401": "unauthorized: no token, or an unknown one (with WWW-Authenticate: Bearer)",
    "403": "forbidden: the role may not, or an agent acting as another",
    "404": "not_found",
    "409": "conflict: the same id with another payload; declaration_mismatch",
    "413": "payload_too_large: a body over api.max_body_bytes",
    "415": "unsupported_media_type: a body whose Content-Type is not JSON",
    "422": "invalid_input (with field and value) or server_owned_field (with fields)",
    "429": "too_many_polls: the agent holds api.max_polls_per_agent polls;"
    " rate_limit_exceeded (with Retry-After): the token's share of the bodies being"
    " received, its requests in flight or its rate",
    "503": "store_unavailable (or busy, with Retry-After, where it applies)",
}

_WRITE = ("400", "401", "403", "413", "415", "422", "429", "503")
_READ = ("400", "503")

ERRORS: dict[tuple[str, str], tuple[str, ...]] = {
    ("/healthz", "get"): ("400",),
    ("/readyz", "get"): _READ,
    ("/agents/tasks/next", "get"): ("400", "401", "403", "404", "422", "429", "503"),
    ("/agents/tasks/answers", "post"): (*_WRITE, "404"),
    ("/agents/heartbeat", "post"): (*_WRITE, "409"),
    ("/agents/{agent_id}/calls", "post"): (*_WRITE, "404"),
    ("/agents", "get"): _READ,
    ("/agents/directory", "get"): (*_READ, "422"),
    ("/agents/{agent_id}", "get"): (*_READ, "404"),
    ("/agents/{agent_id}/card", "get"): (*_READ, "404"),
    ("/.well-known/jwks.json", "get"): _READ,
    ("/admin/api/agents/stats", "get"): (*_READ, "401", "403"),
    ("/deliberation", "post"): _WRITE,  # 400 too_few_agents, 503 busy
    ("/route", "post"): _WRITE,  # 400 too_few_agents
    ("/routing/savings", "get"): (*_READ, "422"),
    ("/deliberation/{deliberation_id}", "get"): (*_READ, "404"),
    ("/deliberations", "get"): (*_READ, "422"),
    ("/deliberations/results", "post"): (*_WRITE, "409"),
    ("/oracle/judgments", "post"): (*_WRITE, "409"),
    ("/oracle/judgments/batch", "post"): _WRITE,  # a conflict is an item's status
    ("/oracle/profiles/{agent_id}", "get"): (*_READ, "404", "422"),
    ("/oracle/profiles/{agent_id}/history", "get"): (*_READ, "404", "422"),
    ("/oracle/leaderboard", "get"): (*_READ, "422"),
    ("/oracle/agents/{agent_id}/validation-rate", "get"): (*_READ, "422"),
    ("/oracle/agents/{agent_id}/privileges", "get"): (*_READ, "422"),
    ("/oracle/sentinel/check", "post"): _WRITE,
    ("/oracle/validations", "post"): (*_WRITE, "404", "409"),
    ("/skills", "get"): (*_READ, "401", "403", "422"),  # 401, 403: ?fresh=true
    ("/agents/{agent_id}/skills", "get"): (*_READ, "401", "403", "404", "422"),
    ("/skills/fit", "post"): _WRITE,
    ("/skills/judges", "get"): _READ,
}
"""Each operation's error statuses."""
