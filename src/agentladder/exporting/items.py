"""What an export holds, item by item, with the API's field names.

- ``judgments``: each judgment as ``POST /oracle/judgments`` takes it and the Oracle
  applied it (its score, provider and model as resolved), the fields ``agent import``
  reads; ``--since``: when the Oracle recorded it (its ledger lines' ``timestamp``).
- ``skills``: the rows of ``GET /skills`` (overall) and of ``GET /skills?task_type=T`` for
  every task type, unbounded; ``--since``: the estimate's latest evidence.
- ``deliberations``: each record as ``GET /deliberation/{id}`` answers it (its failure
  texts redacted: docs/reliability.md); ``--since``: its ``created_at``.
- ``ledger``: each xp_history line as ``GET /oracle/profiles/{id}/history`` lists it;
  ``--since``: its ``timestamp``.

Events, ledger lines and deliberations are read one page at a time (``Store.events_after``
and its kin), so an export holds a page whatever the store's size; skills are current
estimates, one per agent and task type, read whole as ``GET /skills`` reads them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from agentladder.domain.deliberation_record import DeliberationRecord
from agentladder.domain.judgment import Judgment
from agentladder.domain.redact import redacted_fields
from agentladder.domain.skill.board import SkillEntry, skill_board
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill
from agentladder.domain.text import STORED
from agentladder.errors import InvalidInput
from agentladder.redaction import current
from agentladder.store.base import LedgerEntry, Store
from agentladder.store.records import OracleEventKind

__all__ = ["COLUMNS", "PAGE", "Item", "Kind", "items", "parse_since"]

PAGE = 500
"""Events, ledger lines or deliberations read at once."""
DELIBERATION_PAGE = 50
"""Deliberation records read at once (each holds its rounds' answers: tens of KB)."""

Item = tuple[dict[str, Any], str | None]
"""One exported item: its fields, and its JSON when the store gives it ready (else None)."""


class Kind(StrEnum):
    """What an export holds."""

    JUDGMENTS = "judgments"
    SKILLS = "skills"
    DELIBERATIONS = "deliberations"
    LEDGER = "ledger"


_NOT_EXPORTED = {"submissions"}
"""Left out of a deliberation, as ``GET /deliberation/{id}`` leaves it out."""

COLUMNS: dict[Kind, tuple[str, ...]] = {
    Kind.JUDGMENTS: tuple(Judgment.model_fields),
    Kind.SKILLS: tuple(SkillEntry.model_fields),
    Kind.DELIBERATIONS: tuple(n for n in DeliberationRecord.model_fields if n not in _NOT_EXPORTED),
    Kind.LEDGER: tuple(LedgerEntry.model_fields),
}
"""The fields of each kind, in the API's order: a CSV's header."""


def parse_since(text: str) -> datetime:
    """``--since``: an ISO 8601 date or time; without a zone, UTC."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(
            "--since", text, "must be an ISO 8601 time, e.g. 2026-12-01 or 2026-12-01T08:00:00Z"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _time(text: str) -> datetime:
    """A stored time (ISO 8601; SQLite's ``CURRENT_TIMESTAMP`` has no zone: UTC)."""
    value = datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


async def _judgments(store: Store, since: datetime | None) -> AsyncIterator[Item]:
    after = 0
    while page := await store.events_after(after, PAGE):
        for _, event in page:
            if event.kind == OracleEventKind.JUDGMENT and (
                since is None or _time(event.at) >= since
            ):
                yield dict(event.payload), None
        after = page[-1][0]


async def _ledger(store: Store, since: datetime | None) -> AsyncIterator[Item]:
    after = 0
    while page := await store.ledger_after(after, PAGE):
        for entry in page:
            if since is None or _time(entry.timestamp) >= since:
                yield entry.model_dump(mode="json"), None
        after = page[-1].id


async def _deliberations(store: Store, since: datetime | None) -> AsyncIterator[Item]:
    after = 0
    cut = None if since is None else since.timestamp()
    while page := await store.deliberations_after(after, DELIBERATION_PAGE):
        for _, doc in page:
            if cut is not None and doc.created_at < cut:
                continue
            record = DeliberationRecord.model_validate(doc.body, context=STORED)
            record = redacted_fields(record, current())  # no secret in an export
            text = record.model_dump_json(exclude=_NOT_EXPORTED)  # GET /deliberation/{id}
            yield json.loads(text), text
        after = page[-1][0]


def _evidence_at(skill: AgentSkill, task_type: str | None) -> float | None:
    estimate = skill.overall if task_type is None else skill.types.get(task_type)
    return None if estimate is None else estimate.at


async def _skills(
    store: Store, since: datetime | None, rules: SkillRules, now: float
) -> AsyncIterator[Item]:
    skills = await store.list_skills()
    fleet = await store.get_fleet_skill()
    by_agent = {skill.agent_id: skill for skill in skills}
    cut = None if since is None else since.timestamp()
    task_types = sorted({t for skill in skills for t in skill.types})
    for task_type in [None, *task_types]:
        for entry in skill_board(skills, fleet, task_type, now, rules):
            at = _evidence_at(by_agent[entry.agent_id], task_type)
            if cut is None or (at is not None and at >= cut):
                yield entry.model_dump(mode="json"), None


def items(
    store: Store, kind: Kind, since: datetime | None, *, rules: SkillRules, now: float
) -> AsyncIterator[Item]:
    """The items of ``kind`` in ``store`` (since ``since``, when given), one page read at a
    time; ``rules`` and ``now`` are the skill board's."""
    if kind is Kind.JUDGMENTS:
        return _judgments(store, since)
    if kind is Kind.LEDGER:
        return _ledger(store, since)
    if kind is Kind.DELIBERATIONS:
        return _deliberations(store, since)
    return _skills(store, since, rules, now)
