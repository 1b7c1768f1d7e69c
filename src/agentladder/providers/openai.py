"""Agents behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama...).

``POST {base_url}/chat/completions`` with ``{"model", "messages", "max_tokens",
"temperature"}`` and, when ``api_key_env`` is set, ``Authorization: Bearer <key>`` read
from that environment variable at call time. Plain prompting only: no
``response_format``, which some compatible servers refuse.

Every failure is a ``ProviderError`` whose ``kind`` says what went wrong:

- ``refused``: the key's environment variable is missing or empty, or the model refused
  (``message.refusal`` and no content).
- ``timeout``: no complete answer within ``timeout_s`` (one deadline for the whole call).
- ``http``: a 4xx/5xx status (with the status and a body excerpt, and the response's
  ``Retry-After`` as ``retry_after_s``: health cooldowns honour it), or the connection
  failed or was closed before a complete answer.
- ``unparseable``: the body is not the chat-completions shape, or an evaluation reply
  holds no JSON object with a score.
- ``invalid``: an empty answer, or a score that is not a finite number from 0 to 10.

A message names the endpoint by ``shown_url`` (no user, password or query) and every
``ProviderError``'s text is redacted (``redaction.py``): no key leaves through an error.

Token usage comes from the response's ``usage``; a server that reports none gets an
estimate of four characters per token, so that cost accounting still works.
"""

from __future__ import annotations

import email.utils
import functools
import json
import os
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agentladder.domain.agents import AgentConfig
from agentladder.domain.redact import shown_url
from agentladder.errors import ProviderError
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Usage,
)
from agentladder.providers.isolated import isolated
from agentladder.providers.prompts import (
    ChatMessage,
    evaluate_messages,
    parse_evaluation,
    prompt_chars,
    propose_messages,
)
from agentladder.providers.settings import OpenAISettings
from agentladder.redaction import remember

__all__ = ["OpenAIProvider", "call_cost", "endpoint", "transport_reason"]

_EXCERPT_CHARS = 200
TRANSIENT = frozenset({408, 409, 425, 429})
"""The statuses under 500 that asking again may change (a timeout, a conflict, too early,
too many requests); any other 3xx or 4xx answers the same request the same way (a context
too long, a bad key, an unknown model), so it is not retried."""

POOL = httpx.Limits(max_connections=256, max_keepalive_connections=128, keepalive_expiry=4)
"""The connections one agent's client keeps: the gateway streams many requests to one
agent at once, and a connection opened per request (httpx keeps 20 by default) costs a
TCP handshake each (docs/gateway.md, "Speed"). An idle one is closed after 4 s, before
the server would close it: uvicorn (vLLM's server, and many others) closes an idle
connection after 5 s, and a request sent on a connection the server is closing fails
("Server disconnected"), which httpx does not retry for a POST (4 requests in 100,000
failed so in bench_gateway's memory run with a 30 s expiry)."""
_CHARS_PER_TOKEN = 4


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The TLS context of every client a provider opens, made once per process.

    Making one loads the CA bundle: 50 to 250 ms of CPU. Each client making its own on
    its first call, inside the event loop, stalled every other deliberation for that long
    (and their calls timed out)."""
    return httpx.create_ssl_context()


def endpoint(base_url: str) -> str:
    """``{base_url}/chat/completions``; a query of ``base_url`` (``?api-version=...``) is kept
    after the path, not cut by it. A URL that cannot be read is joined as it is (the call
    fails with httpx's ``InvalidURL``: an ``http`` error)."""
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return base_url.rstrip("/") + "/chat/completions"
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def transport_reason(error: BaseException) -> str:
    """What a transport failure says, never empty: its text, else its type (httpx's
    ``ReadError`` from a connection reset has no text of its own)."""
    return _excerpt(str(error)) or type(error).__name__


def call_cost(agent: AgentConfig, usage: Usage) -> float:
    """The cost of one call: tokens times the agent's prices per million tokens."""
    return (
        usage.input_tokens * agent.input_price_per_mtok
        + usage.output_tokens * agent.output_price_per_mtok
    ) / 1_000_000


def retry_after_s(header: str | None, now: float) -> float | None:
    """A Retry-After header in seconds from ``now``: delta-seconds or an HTTP date; None
    when absent or unreadable."""
    if header is None:
        return None
    text = header.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - now)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[:_EXCERPT_CHARS] + "..."


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _usage(body: Mapping[str, Any], messages: list[ChatMessage], reply: str) -> Usage:
    """The reported usage; each count missing or malformed is estimated from the text."""
    reported = body.get("usage")
    reported = reported if isinstance(reported, Mapping) else {}
    prompt = _count(reported.get("prompt_tokens"))
    completion = _count(reported.get("completion_tokens"))
    return Usage(
        input_tokens=prompt if prompt is not None else prompt_chars(messages) // _CHARS_PER_TOKEN,
        output_tokens=completion if completion is not None else len(reply) // _CHARS_PER_TOKEN,
    )


def _content(body: object) -> str:
    """``choices[0].message.content`` of a chat-completions body, else ``ProviderError``."""
    choices = body.get("choices") if isinstance(body, Mapping) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise ProviderError("unparseable", "not a chat-completions body: no choices[0].message")
    content = message.get("content")
    refusal = message.get("refusal")
    if not content and isinstance(refusal, str) and refusal:
        raise ProviderError("refused", f"the model refused: {_excerpt(refusal)}")
    if not isinstance(content, str):
        raise ProviderError("unparseable", f"choices[0].message.content is {content!r}")
    if not content.strip():
        raise ProviderError("invalid", "the model's answer is empty")
    return content


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the endpoint answered: the status and the body, decoded from its encoding."""

    status: int
    body: bytes
    retry_after: str | None = None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class OpenAIProvider:
    """One agent on an OpenAI-compatible endpoint; see the module docstring."""

    def __init__(
        self,
        agent: AgentConfig,
        settings: OpenAISettings,
        *,
        client: httpx.AsyncClient | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.agent = agent
        self.settings = settings
        self.model = settings.model or agent.model_name
        self.url = endpoint(settings.base_url)
        self.shown_url = shown_url(self.url)
        """``url`` as messages show it: no user, password or query (domain/redact.py)."""
        self._environ = environ
        self._client = client
        self._owns_client = client is None
        self.stream_usage = True
        """Whether the gateway asks this endpoint for a stream's usage (``stream_options``);
        false once it refused the field (docs/gateway.md, "Usage asked of the provider")."""
        if self._owns_client:
            _tls_context()  # paid now, when the services are built, not during a call

    def _headers(self) -> dict[str, str]:
        name = self.settings.api_key_env
        if name is None:
            return {}
        key = self._environ.get(name, "")
        if not key:
            raise ProviderError(
                "refused",
                f"environment variable {name} (the API key of {self.agent.name}) is not set",
                retryable=False,
            )
        remember((key,))  # redacted from every error and log line from now on
        return {"Authorization": f"Bearer {key}"}

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            # no timeout of httpx's own (5 s by default): the call's one deadline is
            # ``timeout_s``, kept by ``isolated`` (an answer taking 6 s failed as a timeout)
            self._client = httpx.AsyncClient(verify=_tls_context(), limits=POOL, timeout=None)
        return self._client

    async def _post(self, payload: dict[str, object], headers: dict[str, str]) -> _Answer:
        """POST within one deadline of ``timeout_s``; transport failures as ``ProviderError``."""
        timeout = self.settings.timeout_s
        try:  # one deadline, kept by ``isolated`` alone (httpx's own timeouts are off)
            return await isolated(self._exchange(payload, headers), timeout)
        except (TimeoutError, httpx.TimeoutException) as error:
            raise ProviderError(
                "timeout", f"no answer from {self.shown_url} in {timeout} s"
            ) from error
        except (httpx.HTTPError, httpx.InvalidURL) as error:
            raise ProviderError("http", f"{self.shown_url}: {transport_reason(error)}") from error

    async def _exchange(self, payload: dict[str, object], headers: dict[str, str]) -> _Answer:
        """The status and the decoded body, read up to ``max_response_bytes``."""
        client = self._http()
        request = client.build_request("POST", self.url, json=payload, headers=headers)
        response = await client.send(request, stream=True)
        try:
            cap = self.settings.max_response_bytes
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > cap:
                    raise ProviderError(
                        "http", f"{self.shown_url} answered more than {cap} bytes; not read further"
                    )
            return _Answer(response.status_code, bytes(body), response.headers.get("retry-after"))
        finally:
            await response.aclose()

    async def _body(self, payload: dict[str, object]) -> object:
        """The decoded JSON body of a 2xx answer to ``payload``, else ``ProviderError``."""
        headers = self._headers()  # a missing key is refused before any request
        response = await self._post(payload, headers)
        if response.status >= 300:
            raise ProviderError(
                "http",
                f"{self.shown_url} answered {response.status}: {_excerpt(response.text)}",
                retry_after_s=retry_after_s(response.retry_after, time.time()),
                retryable=response.status >= 500 or response.status in TRANSIENT,
            )
        try:
            body: object = json.loads(response.body)
        except (ValueError, RecursionError) as error:  # nesting too deep to parse: not JSON
            raise ProviderError("unparseable", f"not JSON: {_excerpt(response.text)!r}") from error
        return body

    async def _complete(self, messages: list[ChatMessage]) -> tuple[str, Usage]:
        """The model's reply to ``messages`` and the tokens it used."""
        payload: dict[str, object] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.settings.max_tokens,
            "temperature": self.settings.temperature,
        }
        body = await self._body(payload)
        content = _content(body)
        assert isinstance(body, Mapping)  # _content checked its shape
        return content, _usage(body, messages, content)

    def client(self) -> httpx.AsyncClient:
        """The HTTP client (and its connection pool) this provider calls through."""
        return self._http()

    def credentials(self) -> dict[str, str]:
        """The request headers carrying the agent's key (none without ``api_key_env``);
        ``ProviderError`` (refused, not retryable) when its variable is not set."""
        return self._headers()

    async def relay(self, payload: Mapping[str, object]) -> tuple[int, bytes, float | None]:
        """POST ``payload`` unchanged but for its ``model`` (this agent's), with the agent's
        key, within one deadline of ``timeout_s`` (the gateway, docs/gateway.md): the
        status, the body (read up to ``max_response_bytes``) and the Retry-After in
        seconds; ``ProviderError`` for a transport failure or a timeout."""
        answer = await self._post({**payload, "model": self.model}, self._headers())
        return answer.status, answer.body, retry_after_s(answer.retry_after, time.time())

    async def probe(self) -> float:
        """One tiny request (``max_tokens`` 1), as ``config check --probe`` makes it: the
        seconds it took, or ``ProviderError`` (the key variable missing, the endpoint
        failing or answering what is not a chat completion)."""
        payload: dict[str, object] = {
            "model": self.model,
            "messages": [{"role": "user", "content": "Reply with OK."}],
            "max_tokens": 1,
            "temperature": 0,
        }
        start = time.perf_counter()
        body = await self._body(payload)
        choices = body.get("choices") if isinstance(body, Mapping) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(first, Mapping) or not isinstance(first.get("message"), Mapping):
            raise ProviderError("unparseable", "not a chat-completions body: no choices[0].message")
        return time.perf_counter() - start

    async def propose(self, request: ProposeRequest) -> Proposal:
        """The model's answer to the query, with its token usage."""
        content, usage = await self._complete(propose_messages(request))
        return Proposal(content=content, usage=usage)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The model's JSON score of a peer proposal, with its rationale and usage."""
        content, usage = await self._complete(evaluate_messages(request))
        score, rationale = parse_evaluation(content)
        return Evaluation(score=score, rationale=rationale, usage=usage)

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it (a given client is the caller's)."""
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None
