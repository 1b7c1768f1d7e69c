"""Build real Oracle commits with the domain rules, as the Oracle service does."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentladder.domain.award import apply_judgment
from agentladder.domain.judgment import Judgment
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.rules import OracleRules
from agentladder.store.base import Store
from agentladder.store.records import OracleCommit, OracleEvent, OracleEventKind

RULES = OracleRules()
AT = "2026-01-01T00:00:00+00:00"


def judgment(agent_id: str, contract_id: str, **fields: Any) -> Judgment:
    """A judged task with sensible defaults."""
    values: dict[str, Any] = {"task_type": "sql", "score": 8.5, "cost": 0.01, "budget": 0.02}
    values.update(fields)
    return Judgment(agent_id=agent_id, contract_id=contract_id, **values)


def judgment_commit(profile: AgentProfile | None, item: Judgment) -> OracleCommit:
    """The commit of ``item`` folded into ``profile`` (a new one when None)."""
    current = profile or new_profile(item.agent_id, item.provider, item.model)
    award = apply_judgment(current, item, RULES, AT)
    payload = item.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    event = OracleEvent(
        agent_id=item.agent_id,
        key=item.contract_id,
        kind=OracleEventKind.JUDGMENT,
        payload=payload,
        payload_hash=digest,
        result=award.model_dump(mode="json", exclude={"profile"}),
        lines=award.ledger_lines,
        at=AT,
    )
    return OracleCommit(event=event, profile=award.profile)


async def award(store: Store, item: Judgment) -> int:
    """Read, fold and commit one judgment (no retry); the new revision."""
    current = await store.get_profile(item.agent_id)
    commit = judgment_commit(None if current is None else current.value, item)
    return await store.commit_oracle(commit, 0 if current is None else current.revision)
