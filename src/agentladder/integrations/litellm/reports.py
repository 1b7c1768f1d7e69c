"""A logged LiteLLM call as the ladder's requests: its outcome (``POST /agents/{id}/calls``)
and, when the caller scored it, a judgment (``POST /oracle/judgments``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentladder.integrations.litellm.calls import (
    SCORE,
    TASK_TYPE,
    agent_of,
    latency_ms,
    metadata_of,
    outcome_of,
    response_cost,
)

__all__ = ["Report", "report_of"]


@dataclass(frozen=True)
class Report:
    """What to send the ladder of one call."""

    agent_id: str
    call: dict[str, Any]
    judgment: dict[str, Any] | None


def _tokens(response: object) -> dict[str, int]:
    usage = getattr(response, "usage", None)
    found = {
        "input_tokens": getattr(usage, "prompt_tokens", None),
        "output_tokens": getattr(usage, "completion_tokens", None),
    }
    return {k: v for k, v in found.items() if isinstance(v, int) and v >= 0}


def report_of(
    kwargs: Mapping[str, Any], response: object, start: object, end: object,
    agents: Mapping[str, str], *, failed: bool,
) -> Report | None:  # fmt: skip
    """The report of a call (None when no agent is known for it)."""
    agent = agent_of(kwargs, agents)
    if agent is None:
        return None
    spent = latency_ms(start, end)
    cost = response_cost(kwargs)
    call: dict[str, Any] = {"latency_ms": spent}
    if failed:
        error = kwargs.get("exception")
        call["outcome"] = outcome_of(error)
        call["error"] = f"{type(error).__name__}: {error}"[:2000]
    else:
        call.update(outcome="ok", **_tokens(response))
    if cost is not None:
        call["cost_usd"] = cost
    metadata = metadata_of(kwargs)
    task_type, score = metadata.get(TASK_TYPE), metadata.get(SCORE)
    judgment = None
    call_id = kwargs.get("litellm_call_id")
    if not failed and isinstance(task_type, str) and isinstance(score, int | float):
        judgment = {
            "agent_id": agent, "contract_id": f"litellm-{call_id}", "task_type": task_type,
            "score": float(score), "duration_ms": spent, "cost": cost or 0.0,
            "judge": "litellm",
        }  # fmt: skip
    return Report(agent, call, judgment)
