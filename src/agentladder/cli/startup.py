"""What ``agentladder serve`` checks before it starts, each a small function raising one
of agentladder's own exceptions with a one-line message (the serve command prints it, and
exits with the code ``exit_code`` gives; the traceback only with ``--debug``).
"""

from __future__ import annotations

from agentladder.api.auth import TokenBook
from agentladder.config import Settings
from agentladder.errors import AgentladderError, InvalidInput

__all__ = ["EXIT_CONFIG", "check_api", "exit_code"]

EXIT_CONFIG = 1
"""The configuration, a token or the store URL is invalid."""


def check_api(settings: Settings) -> None:
    """The tokens resolve (each at least 16 characters) and proxies are trusted only with
    tokens (``TokenBook``)."""
    TokenBook(settings.api)


def exit_code(error: AgentladderError) -> int:
    """The documented exit code of a start-up failure."""
    if isinstance(error, InvalidInput):
        return EXIT_CONFIG
    return EXIT_CONFIG
