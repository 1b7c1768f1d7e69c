"""``/dashboard/traffic``: the gateway's traffic. Requests per agent and task type (their
outcomes, fallbacks, the gateway's added latency, the share checked), trust gained and
lost (checks passed and failed, by agent), the judges' spend: this instance's counters
since it started (``GatewayTotals``, ``Traffic``: kept in memory, the page says so); and
each named client's spend against its budget: the store's figures, shared by every
instance (``services/gateway/budgets.py``). A client's name, budget and spend are shown
to an admin only (a bearer token of the role, or a loopback caller when no token is
configured); anyone else sees the clients' count and their spend summed."""

from __future__ import annotations

from collections import Counter

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel

from agentladder.api.deps import ServicesDep, caller_of_request
from agentladder.api.render import page
from agentladder.services.gateway.budgets import ClientSpend
from agentladder.services.gateway.service import Gateway

__all__ = ["router"]

router = APIRouter(prefix="/dashboard", tags=["dashboard"], include_in_schema=False)


class TrafficRow(BaseModel):
    """One agent at one task type: the request's, its classifier's, else the one its check
    and feedback are recorded at (``Gateway.counted_task_type``: ``general`` by default)."""

    agent: str
    task_type: str
    answered: int
    broken: int
    cancelled: int
    fallbacks: int
    checked: int
    share_checked: float | None
    passed: int
    failed: int
    errors: int
    added_mean_ms: float | None
    added_p50_ms: float | None  # the bucket bound the median falls under
    classified: dict[str, int]  # answered requests the classifier typed, by how


class TrustRow(BaseModel):
    """One agent's checks: passed (trust gained), failed (trust lost), judge errors."""

    agent: str
    checked: int
    passed: int
    failed: int
    errors: int
    failed_attempts: int


class ClientRow(BaseModel):
    """One named client: its budget and its spend in the current periods."""

    client: str
    limit: float | None
    period: str | None
    spent: float  # in its budget's period (month without a budget)
    left: float | None
    share: float | None
    resets_at: float | None  # unix seconds
    today: float
    month: float
    total: float


def _rows(gateway: Gateway) -> list[TrafficRow]:
    totals, traffic = gateway.totals, gateway.traffic
    keys = {(a, t) for a, t, _ in totals.requests} | {(a, t) for a, t, _ in totals.checks}
    rows = []
    classified: dict[tuple[str, str], dict[str, int]] = {}
    for (agent, task_type, how), count in sorted(traffic.classified.items()):
        classified.setdefault((agent, task_type), {})[how] = count
    for agent, task_type in sorted(keys | set(traffic.added)):
        asked = {
            o: totals.requests[agent, task_type, o] for o in ("answered", "broken", "cancelled")
        }
        checks = {
            o: totals.checks[agent, task_type, o] for o in ("started", "passed", "failed", "error")
        }
        added = traffic.added.get((agent, task_type))
        mean = None if added is None else added.mean_s
        median = None if added is None else added.median_bound_s()
        rows.append(
            TrafficRow(
                agent=agent, task_type=task_type, answered=asked["answered"],
                broken=asked["broken"], cancelled=asked["cancelled"],
                fallbacks=traffic.fallbacks[agent, task_type], checked=checks["started"],
                share_checked=checks["started"] / asked["answered"] if asked["answered"] else None,
                passed=checks["passed"], failed=checks["failed"], errors=checks["error"],
                added_mean_ms=None if mean is None else mean * 1000,
                added_p50_ms=None if median is None else median * 1000,
                classified=classified.get((agent, task_type), {}),
            )
        )  # fmt: skip
    return rows


def _trust(gateway: Gateway) -> list[TrustRow]:
    by: dict[str, Counter[str]] = {}
    for (agent, _, outcome), count in gateway.totals.checks.items():
        by.setdefault(agent, Counter())[outcome] += count
    failed_attempts = gateway.totals.failed_attempts
    rows = []
    for agent in sorted(set(by) | set(failed_attempts)):
        checks = by.get(agent, Counter())
        rows.append(
            TrustRow(
                agent=agent, checked=checks["started"], passed=checks["passed"],
                failed=checks["failed"], errors=checks["error"],
                failed_attempts=failed_attempts[agent],
            )
        )  # fmt: skip
    return rows


class ClientsSummed(BaseModel):
    """The named clients together, for a caller who may not see each one."""

    count: int
    today: float
    month: float
    total: float


def _summed(rows: list[ClientSpend]) -> ClientsSummed:
    return ClientsSummed(
        count=len(rows), today=sum(r.spent_usd["day"] for r in rows),
        month=sum(r.spent_usd["month"] for r in rows),
        total=sum(r.spent_usd["total"] for r in rows),
    )  # fmt: skip


def _client(row: ClientSpend) -> ClientRow:
    budget = row.budget
    spent = row.spent_usd[budget.period if budget else "month"]
    return ClientRow(
        client=row.client, limit=None if budget is None else budget.limit_usd,
        period=None if budget is None else budget.period, spent=spent,
        left=None if budget is None else max(0.0, budget.limit_usd - spent),
        share=None if budget is None else spent / budget.limit_usd,
        resets_at=None if row.resets_at is None else row.resets_at.timestamp(),
        today=row.spent_usd["day"], month=row.spent_usd["month"], total=row.spent_usd["total"],
    )  # fmt: skip


@router.get("/traffic", response_class=HTMLResponse)
async def traffic(request: Request, services: ServicesDep) -> HTMLResponse:
    """The gateway's traffic on this instance since it started, and the clients' spend:
    each client's to an admin, summed for anyone else."""
    gateway = services.gateway
    spend = gateway.budgets.spend()
    admin = caller_of_request(request).may("admin")
    rows = _rows(gateway)
    answered = sum(r.answered for r in rows)
    checked = sum(r.checked for r in rows)
    return await page(
        request, "traffic.html", rows=rows, trust=_trust(gateway),
        judges=sorted(gateway.totals.judge_cost_usd.items()),
        judge_total=sum(gateway.totals.judge_cost_usd.values()),
        clients=[_client(row) for row in spend] if admin else [],
        summed=None if admin or not spend else _summed(spend),
        unavailable=sorted(gateway.totals.unavailable.items()),
        started_at=gateway.traffic.started_at, answered=answered, checked=checked,
        share_checked=checked / answered if answered else None,
        fallbacks=sum(gateway.traffic.fallbacks.values()),
    )  # fmt: skip
