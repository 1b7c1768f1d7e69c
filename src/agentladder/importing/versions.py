"""Model versions in imported history: which version of its model each agent's evidence
measured, and the ``ModelChange`` skill evidence that starts each version as a new model.

Every judgment that names its model version (a JSONL line's ``model_version``; an Inspect
sample's served model, ``output.model``) and was applied (imported, or a duplicate: a
re-run finds the same) counts. Per agent, each version starts at its first evidence among
them, and one ``ModelChange`` is written per (agent, provider, version) at that time: its
key, ``model:<agent>:<digest of provider and version>``, names the version, not the time,
so the same import run again, or another import of the same version, stores nothing new
(a key stored before keeps its first time). The skill model treats the evidence after a
change as a new model's (docs/skill.md); at an agent's very first evidence a change
changes no estimate, since nothing came before it. Versions of one agent are taken to
follow each other: evidence of an older version dated after a newer one's start counts
as the newer one's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from agentladder.domain.skill.evidence import ModelChange

__all__ = ["Versions", "version_change"]


def version_change(agent_id: str, provider: str, version: str, at: float) -> ModelChange:
    """The evidence that ``agent_id`` runs ``version`` (at ``provider``) from ``at``."""
    digest = hashlib.sha256(f"version|{provider}|{version}".encode()).hexdigest()[:32]
    return ModelChange(
        key=f"model:{agent_id}:{digest}",
        at=at,
        agent_id=agent_id,
        model_name=version,
        provider_id=provider,
    )


@dataclass
class Versions:
    """Per agent and (provider, version), the time of its first evidence seen."""

    first: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)

    def saw(self, agent_id: str, provider: str, version: str, at: float) -> None:
        """One applied judgment of ``agent_id`` measuring ``version`` at ``at``."""
        versions = self.first.setdefault(agent_id, {})
        known = versions.get((provider, version))
        if known is None or at < known:
            versions[(provider, version)] = at

    def changes(self) -> list[ModelChange]:
        """One change per agent and version, at its first evidence; by agent, then time."""
        return [
            version_change(agent, provider, version, at)
            for agent in sorted(self.first)
            for (provider, version), at in sorted(
                self.first[agent].items(), key=lambda pair: (pair[1], pair[0])
            )
        ]
