"""A command's last step in a fresh image of the program (``os.execv``).

``agentladder import`` ends with the skill fit of the whole log. By then its process holds
what the import loaded and allocated: at 1,000,000 judgments about 210 MB of modules,
caches and allocator arenas that Python keeps once grown. The fit would add its own
(about 175 MB) on top. Handed to a fresh image of the program instead (the same process
id, standard streams and exit status: ``importing/last_step.py``), the fit starts from
what it loads itself (about 79 MB): the command's peak is the larger of its two steps, not
their sum (docs/import.md, "Memory").

Only when this process is the program (``main`` marked it) and on POSIX, where
``execv`` replaces the image in place: a command run in a caller's process (a test's
``CliRunner``, a library) does the step in that process.
"""

from __future__ import annotations

import os
import sys

import click

__all__ = ["can_hand_off", "hand_off", "mark_program"]

_program = False


def mark_program() -> None:
    """This process is the ``agentladder`` program: its last steps may replace its image."""
    global _program  # noqa: PLW0603 (one flag for the process, set by its entry point)
    _program = True


def can_hand_off() -> bool:
    """Whether ``hand_off`` may replace this process."""
    return _program and os.name == "posix"


def hand_off(module: str, args: list[str]) -> None:
    """Replace this process with ``python -m MODULE ARGS`` (``--debug`` added when given);
    returns only when the new image could not be started (``OSError``): the caller then
    does the step itself. The standard streams are flushed first: what the replaced image
    printed stays printed."""
    context = click.get_current_context(silent=True)
    debug = context is not None and bool(context.find_root().params.get("debug"))
    argv = [sys.executable, "-m", module, *args, *(["--debug"] if debug else [])]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(sys.executable, argv)
    except OSError:
        return
