"""What ``POST /v1/responses`` adds to the chat route: the request as a chat body
(``responses_request.py``), the chat answer as a Response (``responses_answer.py``), the
chat stream as the Responses API's events (``responses_stream.py``)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agentladder.services.gateway.responses_answer import new_id, response_of
from agentladder.services.gateway.responses_request import chat_body
from agentladder.services.gateway.responses_stream import Bridge, events

__all__ = ["BRIDGING", "Bridging"]


class Bridging:
    """The three translations, for the route."""

    @staticmethod
    def chat_body(request: Mapping[str, Any]) -> dict[str, Any]:
        """The chat body of a Responses request (``InvalidInput`` naming a bad field)."""
        return chat_body(request)

    @staticmethod
    def answer(request: Mapping[str, Any], completion: bytes) -> bytes:
        """The Response of a chat completion (a gateway answer: JSON, checked)."""
        return json.dumps(response_of(request, json.loads(completion))).encode()

    @staticmethod
    def stream(request: Mapping[str, Any], chat: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """The Responses events of a chat stream."""
        return events(chat, Bridge(request, new_id("resp"), time.time()))


BRIDGING = Bridging()
