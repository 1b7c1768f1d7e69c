"""Which id a caller gave its request, kept with the answer's record
(``ServedRequest.request_id``), and the id the gateway answers with, so that a caller's
own log of the call finds the answer again (docs/integrations.md, "Inspect AI"). Pure.

The caller's id is the first of ``CLIENT_ID_HEADERS`` it sent: ``x-irid`` (Inspect AI's
id of each model call, which its log keeps with the call), ``x-client-request-id``
(OpenAI's SDKs' header for a caller's own id), ``x-request-id`` (the common one). An id
over ``REQUEST_ID_MAX`` characters, or with a character that is not printable ASCII, is
not kept (nothing else changes).

Every answer says its contract id in ``x-request-id`` (``ANSWER_ID_HEADER``) besides
``x-agentladder-contract``: the header clients record as the provider's request id
(Inspect AI keeps it in each model event's ``request_ids``).
"""

from __future__ import annotations

from collections.abc import Mapping

from agentladder.store.served import REQUEST_ID_MAX

__all__ = ["ANSWER_ID_HEADER", "CLIENT_ID_HEADERS", "client_request_id"]

CLIENT_ID_HEADERS = ("x-irid", "x-client-request-id", "x-request-id")
"""The headers a caller's request id is read from, the first sent wins."""
ANSWER_ID_HEADER = "x-request-id"
"""The response header that carries the answer's contract id."""


def client_request_id(headers: Mapping[str, str]) -> str | None:
    """The caller's id of its request (``headers``: case-insensitive, as Starlette's), or
    None when it sent none that can be kept."""
    for name in CLIENT_ID_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        value = value.strip()
        if 0 < len(value) <= REQUEST_ID_MAX and value.isascii() and value.isprintable():
            return value
        return None
    return None
