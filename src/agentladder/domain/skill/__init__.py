"""The evidence model: each agent's skill per task type and overall, with its uncertainty.

Pure rules, no I/O: ``fit_observations`` fits every stored observation at once (the
estimate depends on the set of evidence, not on its order), ``snapshot_of`` turns a fit
into the states the stores keep, ``apply_evidence`` moves the states one new piece of
evidence concerns between two fits, and ``skill_view`` and ``skill_board`` read an
estimate as of a moment. See docs/skill.md for the model and its assumptions.
"""

from agentladder.domain.skill.board import SkillEntry, skill_board, skill_view
from agentladder.domain.skill.evidence import (
    DeliberationEvidence,
    Evaluation,
    Evidence,
    ModelChange,
    ReportedScore,
    ScoreEvidence,
    VerdictEvidence,
)
from agentladder.domain.skill.fit import FitResult, fit_observations
from agentladder.domain.skill.live import SkillUpdate, apply_evidence
from agentladder.domain.skill.observations import Observations
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.snapshot import Snapshot, snapshot_of
from agentladder.domain.skill.state import (
    FLEET,
    AgentSkill,
    Estimate,
    FleetSkill,
    SourceState,
)
from agentladder.domain.skill.table import observations_of

__all__ = [
    "FLEET",
    "AgentSkill",
    "DeliberationEvidence",
    "Estimate",
    "Evaluation",
    "Evidence",
    "FitResult",
    "FleetSkill",
    "ModelChange",
    "Observations",
    "ReportedScore",
    "ScoreEvidence",
    "SkillEntry",
    "SkillRules",
    "SkillUpdate",
    "Snapshot",
    "SourceState",
    "VerdictEvidence",
    "apply_evidence",
    "fit_observations",
    "observations_of",
    "skill_board",
    "skill_view",
    "snapshot_of",
]
