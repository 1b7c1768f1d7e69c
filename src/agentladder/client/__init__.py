"""``agentladder.client``: a typed client of the agentladder API (docs/client.md).

::

    from agentladder.client import Ladder

    with Ladder("http://127.0.0.1:8000", token="...") as ladder:
        ladder.judge(agent_id="sim_a", contract_id="task-1", score=8.5)

``Ladder`` blocks, ``AsyncLadder`` has the same methods as coroutines. Parameters and
answers are the API's own pydantic models (a request model may also be given as a dict
or as keyword arguments); errors are one tree under ``LadderError``
(``errors.py``); 503, 429 and lost connections are tried again (``core.py``).
"""

from __future__ import annotations

from agentladder.client.async_ import AsyncLadder
from agentladder.client.errors import (
    AnswerTooLarge,
    Conflict,
    Forbidden,
    InvalidInput,
    LadderError,
    NotFound,
    RateLimited,
    RetryLater,
    ServerError,
    TooFewAgents,
    Unauthorized,
    Unavailable,
)
from agentladder.client.models import (
    BATCH_MAX,
    Accepted,
    AgentConfig,
    AgentFields,
    AgentOut,
    AgentProfile,
    AgentSkillsOut,
    BatchItemOut,
    CallFields,
    CallOutcome,
    CallOutcomeIn,
    CallRecordedOut,
    DeliberationOut,
    ExternalDeliberation,
    ExternalFields,
    FreshnessOut,
    JudgeOut,
    JudgesOut,
    JudgeTypeOut,
    JudgmentFields,
    JudgmentRequest,
    JudgmentResult,
    ReportedAgent,
    ReportedRound,
    RouteFields,
    RouteOut,
    RouteRequest,
    SamplingDecision,
    SavingsReport,
    SkillAsOfOut,
    SkillBoardOut,
    SkillFitOut,
    SkillOut,
    Validation,
    ValidationResult,
)
from agentladder.client.sync import Ladder

__all__ = [
    "BATCH_MAX",
    "Accepted",
    "AgentConfig",
    "AgentFields",
    "AgentOut",
    "AgentProfile",
    "AgentSkillsOut",
    "AnswerTooLarge",
    "AsyncLadder",
    "BatchItemOut",
    "CallFields",
    "CallOutcome",
    "CallOutcomeIn",
    "CallRecordedOut",
    "Conflict",
    "DeliberationOut",
    "ExternalDeliberation",
    "ExternalFields",
    "Forbidden",
    "FreshnessOut",
    "InvalidInput",
    "JudgeOut",
    "JudgeTypeOut",
    "JudgesOut",
    "JudgmentFields",
    "JudgmentRequest",
    "JudgmentResult",
    "Ladder",
    "LadderError",
    "NotFound",
    "RateLimited",
    "ReportedAgent",
    "ReportedRound",
    "RetryLater",
    "RouteFields",
    "RouteOut",
    "RouteRequest",
    "SamplingDecision",
    "SavingsReport",
    "ServerError",
    "SkillAsOfOut",
    "SkillBoardOut",
    "SkillFitOut",
    "SkillOut",
    "TooFewAgents",
    "Unauthorized",
    "Unavailable",
    "Validation",
    "ValidationResult",
]
