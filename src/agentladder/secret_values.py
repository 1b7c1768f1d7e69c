"""Which values of a configuration are secrets: what ``redaction.remember`` is told when a
command loads its settings (``serve``, ``config check``, ``export``).

- every agent's and the gateway judge's API key: the value of its ``api_key_env``;
- every ``api.tokens`` value (inline ``token`` or the value of ``token_env``);
- the password of a configured URL (a backend's ``base_url``, the ``store``)
  and the values of its key-like query parameters (``api_key``, ``key``, ``token``...).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from urllib.parse import parse_qsl, unquote, urlsplit

from agentladder.config import Settings
from agentladder.providers.settings import OpenAISettings

__all__ = ["KEY_PARAMETERS", "known_secrets", "url_secrets"]

KEY_PARAMETERS = frozenset(
    {"api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "password",
     "secret", "sig"}
)  # fmt: skip
"""The query parameters of a configured URL whose values are secrets."""


def url_secrets(url: str) -> Iterator[str]:
    """The password (the user when it has none: a token as the user) and the key-like
    query values of ``url``, each also percent-decoded, as a server may echo either."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    user, colon, password = userinfo.partition(":")
    found = [password if colon else user] if userinfo else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in KEY_PARAMETERS]
    for value in found:
        yield value
        yield unquote(value)


def known_secrets(settings: Settings, environ: Mapping[str, str] = os.environ) -> set[str]:
    """Every secret value of ``settings`` with the variables of ``environ``."""
    backends: list[OpenAISettings] = [
        a.backend for a in settings.agents if isinstance(a.backend, OpenAISettings)
    ]
    judge = settings.gateway.judge
    if judge is not None and judge.backend is not None:
        backends.append(judge.backend)
    found: set[str] = set(url_secrets(settings.store))
    for backend in backends:
        if backend.api_key_env is not None:
            found.add(environ.get(backend.api_key_env, ""))
        found.update(url_secrets(backend.base_url))
    for token in settings.api.tokens:
        found.add(token.token or environ.get(token.token_env or "", ""))
    found.discard("")
    return found
