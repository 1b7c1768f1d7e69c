"""What a routing answer warns of (``Routing.warnings``): routing at a task type no agent
has evidence at still works (on each agent's predicted skill: the fleet's level and its
other task types), so that a new task type routes from its first request; but a task type
nobody was judged at is most often a typo (``code_reveiw``), and the caller is told, with
the closest known task types (``domain/suggestions.py``).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection

from agentladder.domain.suggestions import Names, closest, did_you_mean

__all__ = ["no_evidence"]


def no_evidence(task_type: str | None, known: Names | Collection[str]) -> str | None:
    """The warning for routing at ``task_type`` when no agent has evidence at it (it is
    not one of ``known``, the task types agents were judged at: names, or their index);
    None otherwise, and for no task type (overall skill)."""
    if task_type is None or task_type in known:
        return None
    near = known.closest(task_type) if isinstance(known, Names) else closest(task_type, known)
    hint = f"; {did_you_mean(near)}" if near else ""
    return (
        f"no agent has evidence at task type {task_type!r}: routed on predicted skill (the"
        f" fleet's level and the agents' other task types){hint}"
    )
