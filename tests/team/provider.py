"""The team's local OpenAI-compatible provider: one loopback server, six personalities.

``TeamProvider`` is ``tests/providers/chat_server.ChatServer`` (a real HTTP server on
127.0.0.1 and a free port, in a background thread) answering each request by the
personality its ``model`` names (the agent's ``backend.model``; any unknown model answers
as ``steady``):

- ``nokey``: 401 ``invalid api key`` (an OpenAI-style error body), whatever the key;
- ``garbage``: 200 with a body that is not JSON;
- ``slow``: a good answer after ``delays["slow"]`` seconds (2 by default);
- ``limited``: 429 with ``Retry-After: <retry_after["limited"]>`` (``30`` by default);
- ``steady``: a good answer at once;
- ``stream``: a good answer; as server-sent events when the request asks ``stream: true``.

A good answer to a proposal is ``answer from <personality>``; to an evaluation (the
request's last message asks for the JSON score) it is a JSON score (``SCORES``), so that
a deliberation among the healthy ones completes and ranks. ``delays`` and
``retry_after`` may be changed while it serves (another personality may be given a delay
too); ``seen`` records every request, ``asked(personality)`` counts them.
"""

from __future__ import annotations

import json
from typing import Any

from tests.providers.chat_server import ChatServer, Reply, Seen, completion

__all__ = ["PERSONALITIES", "SCORES", "TeamProvider"]

PERSONALITIES = ("nokey", "garbage", "slow", "limited", "steady", "stream")
SCORES = {"slow": 8.0, "steady": 7.5, "stream": 6.5}
"""The score each healthy personality gives a proposal it evaluates."""
_EVALUATION = 'Reply with JSON only: {"score"'


def _is_evaluation(body: Any) -> bool:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return False
    last = messages[-1]
    return isinstance(last, dict) and _EVALUATION in str(last.get("content", ""))


def _events(name: str, content: str) -> str:
    """A chat-completions stream of ``content`` in two pieces, usage, then ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        event = {
            "id": f"chatcmpl-{name}", "object": "chat.completion.chunk", "created": 1,
            "model": name, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }  # fmt: skip
        return f"data: {json.dumps(event)}\n\n"

    half = len(content) // 2
    usage = {
        "id": f"chatcmpl-{name}", "object": "chat.completion.chunk", "created": 1,
        "model": name, "choices": [],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }  # fmt: skip
    return (
        chunk({"role": "assistant", "content": content[:half]})
        + chunk({"content": content[half:]})
        + chunk({}, "stop")
        + f"data: {json.dumps(usage)}\n\n"
        + "data: [DONE]\n\n"
    )


class TeamProvider(ChatServer):
    """The six personalities on one server; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.delays: dict[str, float] = {"slow": 2.0}
        self.retry_after: dict[str, str] = {"limited": "30"}

    def record(self, seen: Seen) -> Reply:
        """Record a request; the reply its personality gives."""
        with self._lock:
            self.seen.append(seen)
        body = seen.body if isinstance(seen.body, dict) else {}
        name = str(body.get("model", "steady"))
        name = name if name in PERSONALITIES else "steady"
        delay = self.delays.get(name, 0.0)
        if name == "nokey":
            error = {"message": "invalid api key", "type": "invalid_request_error",
                     "code": "invalid_api_key"}  # fmt: skip
            return Reply({"error": error}, status=401, delay_s=delay)
        if name == "garbage":
            return Reply("<html><body>Service temporarily fine</body></html>", delay_s=delay,
                         content_type="text/html")  # fmt: skip
        if name == "limited":
            error = {"message": "rate limit reached", "type": "rate_limit_error"}
            headers = (("Retry-After", self.retry_after["limited"]),)
            return Reply({"error": error}, status=429, headers=headers, delay_s=delay)
        content = f"answer from {name}"
        if _is_evaluation(body):
            score = SCORES.get(name, 7.0)
            content = json.dumps({"score": score, "rationale": f"{name} finds it sound"})
        if name == "stream" and body.get("stream") is True:
            return Reply(_events(name, content), delay_s=delay, content_type="text/event-stream")
        return Reply(completion(content), delay_s=delay)

    def asked(self, personality: str) -> int:
        """How many requests named ``personality`` so far."""
        with self._lock:
            return sum(
                1
                for s in self.seen
                if isinstance(s.body, dict) and s.body.get("model") == personality
            )
