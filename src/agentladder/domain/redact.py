"""No secret leaves through an error: the rules that take keys, tokens and passwords out of
a text (a provider's error, an exception's message, a log line) and out of a URL shown.

``redact(text, secrets)`` replaces with ``[redacted]`` every configured secret value
(``secrets``: the API keys, tokens and URL passwords the service knows) and every shape
in ``RULES``, a short and conservative list of what keys look like, so that an ordinary
word is not eaten: a bearer or basic credential, ``sk-`` keys (OpenAI, Anthropic and
their kin), AWS access key ids, GitHub and Slack tokens, Google API keys, Hugging Face
and Stripe keys, JSON web tokens, the user and password of a URL
(``scheme://user:pass@``) and the value of a ``key``-like query parameter.
``shown_url(url)`` is a URL as a message shows it: without its user information, query
or fragment. ``redacted_fields(record, redactor)`` is a stored record with the failure
texts of its fields (``error``, ``detail``, ``last_error``...) redacted. Pure functions:
no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "RULES",
    "TEXT_FIELDS",
    "Redactor",
    "redact",
    "redacted_fields",
    "shown_url",
]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4
"""A configured value shorter than this is not redacted: a placeholder key of a server
without authentication (``x``, ``no``) would eat letters out of every message. A value
that is part of ``[redacted]`` itself is not redacted either (it is never a secret)."""
_ROUNDS = 8
"""Secret replacements repeated at most this often (a secret can straddle a marker put
in its place: ``d]x`` in ``d]xx``); past it the whole text is ``[redacted]``."""

_TOKEN = r"[A-Za-z0-9._~+/=-]"
RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # name, pattern, replacement (\1: a prefix kept, so that the message still reads)
    ("url userinfo", re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#]*@"),
     rf"\1{REDACTED}@"),
    ("key in a query", re.compile(
        r"(?i)([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|password|secret|sig)=)"
        r"[^&#\s\"'<>]+"), rf"\1{REDACTED}"),
    ("bearer or basic credential",
     re.compile(rf"(?i)\b((?:bearer|basic)\s+){_TOKEN}{{8,}}"), rf"\1{REDACTED}"),
    ("sk- key (OpenAI, Anthropic...)", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), REDACTED),
    ("Stripe key", re.compile(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"), REDACTED),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), REDACTED),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})"),
     REDACTED),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), REDACTED),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), REDACTED),
    ("JSON web token",
     re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), REDACTED),
)  # fmt: skip
"""What a key looks like, each rule with its name (docs/reliability.md lists them)."""


def _kept(secrets: Iterable[str]) -> tuple[str, ...]:
    """The secrets worth redacting, longest first (a key that holds another goes whole)."""
    found = {s for s in secrets if len(s) >= MIN_SECRET_CHARS and s not in REDACTED}
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


@functools.lru_cache(maxsize=64)
def _pattern(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    return re.compile("|".join(re.escape(s) for s in secrets))


def _by_rules(text: str) -> str:
    for _, pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def _by_secrets(text: str, secrets: tuple[str, ...]) -> str:
    pattern = _pattern(secrets)
    if pattern is None:
        return text
    for _ in range(_ROUNDS):
        if pattern.search(text) is None:
            return text
        text = pattern.sub(REDACTED, text)
    return text if pattern.search(text) is None else REDACTED


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every shape of ``RULES`` and every configured value of ``secrets``
    (at least ``MIN_SECRET_CHARS`` long) replaced by ``[redacted]``."""
    return _by_secrets(_by_rules(text), _kept(secrets))


@dataclass(frozen=True, slots=True)
class Redactor:
    """``redact`` with the secrets a service knows, as one callable value."""

    secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "secrets", _kept(self.secrets))

    def __call__(self, text: str) -> str:
        """``text`` redacted (``redact``)."""
        return _by_secrets(_by_rules(text), self.secrets)

    def with_secrets(self, more: Iterable[str]) -> Redactor:
        """This redactor knowing ``more`` secrets as well."""
        return Redactor((*self.secrets, *more))


def shown_url(url: str) -> str:
    """``url`` as a message shows it: scheme, host, port and path, without the user and
    password, the query (``?api_key=...``) or the fragment. A URL that cannot be read is
    shown redacted (``redact``)."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return redact(url.split("?", 1)[0])


TEXT_FIELDS = frozenset({"error", "detail", "last_error", "reason", "down_reason", "explanation"})
"""The fields of stored records that hold a failure's text (``redacted_fields``)."""

M = TypeVar("M", bound=BaseModel)


def redacted_fields(model: M, redactor: Callable[[str], str]) -> M:
    """``model`` with every text of a field named in ``TEXT_FIELDS``, at any depth (models,
    lists, dicts), through ``redactor``: what a record stored before redaction (or reported
    from elsewhere) shows. The same object when nothing changed; answers and queries are
    never touched."""
    updates: dict[str, Any] = {}
    for name in _text_paths(type(model)):
        value = getattr(model, name)
        walked = _walk(name, value, redactor)
        if walked is not value:
            updates[name] = walked
    return model.model_copy(update=updates) if updates else model


_VISITING: set[type[BaseModel]] = set()


@functools.cache
def _text_paths(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``cls`` that hold a failure text, or a model that can: the only ones
    walked (a record's submissions, scores and request are not)."""
    _VISITING.add(cls)
    try:
        return tuple(
            name for name, info in cls.model_fields.items()
            if name in TEXT_FIELDS or any(
                m not in _VISITING and _text_paths(m) for m in _models(info.annotation)
            )
        )  # fmt: skip
    finally:
        _VISITING.discard(cls)


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The model classes an annotation names, at any depth (``list[X] | None``...)."""
    found = (
        [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []
    )
    for argument in get_args(annotation):
        found += _models(argument)
    return found


def _walk(name: str, value: Any, redactor: Callable[[str], str]) -> Any:
    """``value`` of the field ``name`` redacted; the same object when nothing changed (a
    list or dict is copied only when an item changed)."""
    if value is None:
        return value
    if isinstance(value, str):
        if name not in TEXT_FIELDS:
            return value
        cleaned = redactor(value)
        return value if cleaned == value else cleaned
    if isinstance(value, BaseModel):
        return redacted_fields(value, redactor)
    if isinstance(value, list):
        copied: list[Any] | None = None
        for position, item in enumerate(value):
            walked = _walk(name, item, redactor)
            if walked is not item:
                copied = copied if copied is not None else list(value)
                copied[position] = walked
        return value if copied is None else copied
    if isinstance(value, dict):
        changed = {}
        for key, item in value.items():
            walked = _walk(name, item, redactor)
            if walked is not item:
                changed[key] = walked
        return {**value, **changed} if changed else value
    return value
