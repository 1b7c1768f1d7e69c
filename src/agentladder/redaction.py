"""The secrets this process knows, and the redaction every error text and log line goes
through (the rules: ``domain/redact.py``).

The secrets are the process's, as the environment they mostly come from is: the value of
every agent's and the judge's ``api_key_env`` variable, every ``api.tokens`` value, and
the password of every configured URL (``known_secrets`` in ``secret_values.py`` finds
them; ``serve``, ``config check`` and ``export`` tell them here with ``remember``, and a
provider tells the key it sends). ``scrub`` is what ``ProviderError`` and the services
apply to a failure's text before it is stored, shown or logged; ``redact_logs`` makes
every log record of the process go through it (its message, and the traceback of an
exception it carries) before any handler writes it. One place, so that every exit sees
the same secrets: a value learnt late (a key read at call time) is redacted from then on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from agentladder.domain.redact import MIN_SECRET_CHARS, REDACTED, Redactor

__all__ = ["current", "redact_logs", "remember", "scrub"]


class _Known:
    """The one redactor of the process, replaced whole when a secret is learnt."""

    redactor = Redactor()


_lock = threading.Lock()
_formatter = logging.Formatter()
_installed: list[Callable[..., logging.LogRecord]] = []


def remember(values: Iterable[str | None]) -> None:
    """Know these secret values from now on (None and empty values are skipped)."""
    known = _Known.redactor.secrets
    fresh = {
        v for v in values
        if v and len(v) >= MIN_SECRET_CHARS and v not in REDACTED and v not in known
    }  # fmt: skip
    if not fresh:
        return
    with _lock:
        _Known.redactor = _Known.redactor.with_secrets(fresh)


def current() -> Redactor:
    """The redactor with every secret known now."""
    return _Known.redactor


def scrub(text: str) -> str:
    """``text`` without the secrets known and the shapes of keys (``domain/redact.py``)."""
    return _Known.redactor(text)


def _redacted(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message (and its exception's text) redacted, when it held
    anything to redact; a message that cannot be formatted is left to logging."""
    try:
        message = record.getMessage()
    except Exception:  # logging reports a bad format itself, when a handler formats it
        return record
    cleaned = scrub(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None
    if record.exc_info and record.exc_info[0] is not None:
        text = _formatter.formatException(record.exc_info)
        record.exc_text = scrub(text)  # formatters use it as it is
    return record


def redact_logs() -> None:
    """Every log record made in this process from now on is redacted as it is made (once
    per process; ``logging.setLogRecordFactory``)."""
    with _lock:
        if _installed:
            return
        made = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return _redacted(made(*args, **kwargs))

        _installed.append(made)
        logging.setLogRecordFactory(factory)
