"""The evidence model: each agent's skill per task type and overall, with its uncertainty.

Pure rules, no I/O: ``apply_evidence(states, evidence, rules)`` folds one piece of
evidence (a deliberation's peer evaluations, a judgment, a Sentinel verdict, a model
change) into the states of the agents it concerns; ``skill_view`` and ``skill_board``
read an estimate as of a moment. See docs/skill.md for the model and its assumptions.
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
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import FLEET, AgentSkill, Estimate, EvaluatorState, FleetSkill
from agentladder.domain.skill.update import SkillUpdate, apply_evidence

__all__ = [
    "FLEET",
    "AgentSkill",
    "DeliberationEvidence",
    "Estimate",
    "Evaluation",
    "EvaluatorState",
    "Evidence",
    "FleetSkill",
    "ModelChange",
    "ReportedScore",
    "ScoreEvidence",
    "SkillEntry",
    "SkillRules",
    "SkillUpdate",
    "VerdictEvidence",
    "apply_evidence",
    "skill_board",
    "skill_view",
]
