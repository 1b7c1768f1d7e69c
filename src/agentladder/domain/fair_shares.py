"""Fair shares of the server per role and per token: the settings and their consistency.

``api.roles`` gives each role (admin, orchestrator, agent, client) its bounds: the share
of ``api.max_buffered_bytes`` all its tokens together may hold in unfinished bodies,
and, for each of its tokens, the requests in flight and a request rate with a burst (a
token bucket, ``token_bucket.py``). A token may set its own ``max_in_flight``,
``rate_per_s`` and ``burst`` (``api.tokens[]``); ``caller_limits`` resolves what holds
for one. ``share_problems`` lists the settings that contradict each other, each as an
``InvalidInput`` naming the key and its value: a share too small for the largest body
its callers may send, a client role leaving no room for the other roles' writes, a burst
without a rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentladder.domain.buffer_shares import share_bytes
from agentladder.errors import InvalidInput

__all__ = [
    "AdminLimits",
    "AgentLimits",
    "CallerLimits",
    "ClientLimits",
    "OrchestratorLimits",
    "RoleLimits",
    "RoleTable",
    "TokenLimits",
    "caller_limits",
    "share_problems",
]

_SHARE = (
    "share of api.max_buffered_bytes all the role's tokens together may hold in bodies"
    " being received"
)
_IN_FLIGHT = (
    "requests one token of the role may have in flight (until its response ends); none: no bound"
)
_RATE = (
    "requests a second one token of the role may make on average (a token bucket); none: no limit"
)
_BURST = (
    "requests one token of the role may make at once (the bucket's size); none: one second's worth"
)


class RoleLimits(BaseModel):
    """One role's bounds (a role with none: bounded by the server's totals only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_buffered_share: float = Field(default=1.0, gt=0.0, le=1.0, description=_SHARE)
    max_in_flight: int | None = Field(default=None, ge=1, le=1_000_000, description=_IN_FLIGHT)
    rate_per_s: float | None = Field(
        default=None, gt=0.0, le=1_000_000.0, allow_inf_nan=False, description=_RATE
    )
    burst: int | None = Field(default=None, ge=1, le=1_000_000, description=_BURST)

    @model_validator(mode="after")
    def _burst_needs_rate(self) -> RoleLimits:
        if self.burst is not None and self.rate_per_s is None:
            raise ValueError("burst needs rate_per_s: it is the size of the rate's bucket")
        return self


class AdminLimits(RoleLimits):
    """The admin role's: no bound of its own."""


class OrchestratorLimits(RoleLimits):
    """The orchestrator role's (judgments, deliberations): no bound of its own."""


class AgentLimits(RoleLimits):
    """The agent role's: half the buffered bytes; 256 requests in flight per token (64 long
    polls, the most ``agentladder agent`` runs, and their results, with room)."""

    max_buffered_share: float = Field(default=0.5, gt=0.0, le=1.0, description=_SHARE)
    max_in_flight: int | None = Field(default=256, ge=1, le=1_000_000, description=_IN_FLIGHT)


class ClientLimits(RoleLimits):
    """The client role's (the gateway's callers): three quarters of the buffered bytes, 32
    requests in flight and 50 a second with a burst of 100 per token."""

    max_buffered_share: float = Field(default=0.75, gt=0.0, le=1.0, description=_SHARE)
    max_in_flight: int | None = Field(default=32, ge=1, le=1_000_000, description=_IN_FLIGHT)
    rate_per_s: float | None = Field(
        default=50.0, gt=0.0, le=1_000_000.0, allow_inf_nan=False, description=_RATE
    )
    burst: int | None = Field(default=100, ge=1, le=1_000_000, description=_BURST)


class MetricsLimits(RoleLimits):
    """The metrics role's (a scraper of ``/metrics``, reads only): half the buffered bytes
    (it has no body to send: its writes are refused) and 8 requests in flight per token."""

    max_buffered_share: float = Field(default=0.5, gt=0.0, le=1.0, description=_SHARE)
    max_in_flight: int | None = Field(default=8, ge=1, le=1_000_000, description=_IN_FLIGHT)


class RoleTable(BaseModel):
    """Each role's bounds (``api.roles``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    admin: AdminLimits = AdminLimits()
    orchestrator: OrchestratorLimits = OrchestratorLimits()
    agent: AgentLimits = AgentLimits()
    client: ClientLimits = ClientLimits()
    metrics: MetricsLimits = MetricsLimits()

    def of(self, role: str) -> RoleLimits:
        """The bounds of ``role``."""
        found: RoleLimits = getattr(self, role)
        return found


class TokenLimits(Protocol):
    """What a token may set of its own bounds (``TokenSettings`` has it)."""

    @property
    def role(self) -> str: ...
    @property
    def max_in_flight(self) -> int | None: ...
    @property
    def rate_per_s(self) -> float | None: ...
    @property
    def burst(self) -> int | None: ...


@dataclass(frozen=True)
class CallerLimits:
    """What holds for one caller: its in-flight bound and rate (None: none)."""

    max_in_flight: int | None
    rate_per_s: float | None
    burst: int


def caller_limits(role: RoleLimits, token: TokenLimits | None = None) -> CallerLimits:
    """The bounds of a token of ``role`` (its own where it sets them, else the role's); a
    rate without a burst gets one second's worth (at least 1)."""
    in_flight = role.max_in_flight
    rate, burst = role.rate_per_s, role.burst
    if token is not None:
        in_flight = token.max_in_flight if token.max_in_flight is not None else in_flight
        if token.rate_per_s is not None:
            rate, burst = token.rate_per_s, None  # the role's burst was sized for its rate
        burst = token.burst if token.burst is not None else burst
    if burst is None:
        burst = max(1, math.ceil(rate)) if rate is not None else 1
    return CallerLimits(in_flight, rate, burst)


def share_problems(
    total: int,
    per_token_share: float,
    roles: RoleTable,
    tokens: Sequence[TokenLimits],
    max_body_bytes: int,
    gateway_max_body_bytes: int,
) -> list[InvalidInput]:
    """Every contradiction of the shares and rates (none: they hold together). ``total``
    is ``api.max_buffered_bytes``; the gateway's bodies are sent by admin and client
    tokens, the other roles' by ``api.max_body_bytes``."""
    problems: list[InvalidInput] = []
    largest = max(max_body_bytes, gateway_max_body_bytes)
    own = share_bytes(total, per_token_share)
    if own < largest:
        problems.append(InvalidInput(
            "api.max_buffered_share_per_token", per_token_share,
            f"leaves one token {own} of api.max_buffered_bytes ({total}) bytes, under the"
            f" largest body it may send ({largest}): such a body could never be received",
        ))  # fmt: skip
    for name in RoleTable.model_fields:
        share = roles.of(name).max_buffered_share
        needed = gateway_max_body_bytes if name in ("admin", "client") else max_body_bytes
        needed = max(needed, max_body_bytes)
        if share_bytes(total, share) < needed:
            problems.append(InvalidInput(
                f"api.roles.{name}.max_buffered_share", share,
                f"leaves the {name} role {share_bytes(total, share)} of api.max_buffered_bytes"
                f" ({total}) bytes, under the largest body it may send ({needed})",
            ))  # fmt: skip
    client = roles.client.max_buffered_share
    left = total - share_bytes(total, client)
    if left < max_body_bytes:
        problems.append(InvalidInput(
            "api.roles.client.max_buffered_share", client,
            f"leaves the other roles {left} of api.max_buffered_bytes ({total}) bytes, under"
            f" one body of api.max_body_bytes ({max_body_bytes}): clients could stop their writes",
        ))  # fmt: skip
    for index, token in enumerate(tokens):
        if (
            token.burst is not None
            and caller_limits(roles.of(token.role), token).rate_per_s is None
        ):
            problems.append(InvalidInput(
                f"api.tokens[{index}].burst", token.burst,
                f"needs a rate_per_s, on the token or its role ({token.role})",
            ))  # fmt: skip
    return problems
