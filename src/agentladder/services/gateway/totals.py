"""``GatewayTotals``: the gateway's counters, shared by the request path (``service.py``)
and the checks (``checks.py``), for ``/metrics`` and the traffic page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["GatewayTotals"]


@dataclass
class GatewayTotals:
    """The gateway's counters for ``/metrics`` and the traffic page.

    ``checks`` counts checks by (agent, task type, outcome): ``started``, then ``passed``,
    ``failed`` (the judge's score below the pass score) or ``error`` (the judge failed);
    ``dropped`` (decided, never run) and ``own_agent`` (the judge's agent answered:
    no check); ``judge_cost_usd`` is the judges' spend on checks, by judge name
    (``checks.py``). ``classifications`` counts the requests classified, by (task type,
    ``''`` when none was found; outcome: ``rule``, ``agent``, ``default`` or ``failed``),
    and ``classifier_cost_usd`` the classifier agent's calls, by agent
    (``classifier.py``)."""

    requests: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    failed_attempts: Counter[str] = field(default_factory=Counter)
    unavailable: Counter[str] = field(default_factory=Counter)
    checks: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    judge_cost_usd: dict[str, float] = field(default_factory=dict)
    classifications: Counter[tuple[str, str]] = field(default_factory=Counter)
    classifier_cost_usd: dict[str, float] = field(default_factory=dict)
