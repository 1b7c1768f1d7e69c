"""What an agent process and the orchestrator say to each other, whatever the transport.

A task is a ``ProposeRequest`` or an ``EvaluateRequest`` as JSON; the answer is the
agent's ``Proposal`` or ``Evaluation`` as JSON, or ``{"error": {"kind", "message"}}``.
NATS carries them by request-reply (``agents.nats``), HTTP by a long poll and a post
(``agents.http``).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from agentladder.errors import ProviderError
from agentladder.providers.base import EvaluateRequest, ProposeRequest, Provider

__all__ = ["DEFAULT_CONCURRENCY", "TaskKind", "answer_task", "decode_reply", "parse_answer"]

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
TaskKind = Literal["propose", "evaluate"]
DEFAULT_CONCURRENCY = 4
"""Tasks an agent process answers at once: one hanging model call does not stop the rest."""


async def answer_task(provider: Provider, agent: str, kind: str, data: bytes) -> bytes:
    """The agent's answer to one task: its proposal or evaluation, or an error for a
    ``ProviderError``, an invalid task, or any other failure of the provider (``refused``,
    naming it), so that a provider's bug costs the orchestrator no timeout."""
    try:
        if kind == "propose":
            answer: BaseModel = await provider.propose(ProposeRequest.model_validate_json(data))
        elif kind == "evaluate":
            answer = await provider.evaluate(EvaluateRequest.model_validate_json(data))
        else:
            return _error("invalid", f"unknown task kind {kind!r}")
        return answer.model_dump_json().encode()
    except ProviderError as error:
        return _error(error.kind, str(error))
    except ValidationError as error:
        return _error("invalid", str(error))
    except Exception as error:  # a provider bug: answer now, never leave the asker waiting
        log.exception("agent %s failed to %s", agent, kind)
        return _error("refused", f"the agent failed: {type(error).__name__}: {error}")


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"error": {"kind": kind, "message": message}}).encode()


def decode_reply(data: bytes, agent_id: str) -> dict[str, Any]:
    """An agent's answer as a JSON object; ``ProviderError`` for an error or garbage."""
    try:
        reply = json.loads(data)
    except ValueError as error:
        raise ProviderError("unparseable", f"agent {agent_id!r}: not JSON") from error
    if not isinstance(reply, dict):
        raise ProviderError("unparseable", f"agent {agent_id!r}: not a JSON object")
    if "error" in reply:
        detail = reply["error"] if isinstance(reply["error"], dict) else {}
        raise ProviderError(str(detail.get("kind", "refused")), str(detail.get("message", "")))
    return reply


def parse_answer(model: type[M], data: dict[str, Any], agent_id: str) -> M:
    """``model`` from an agent's answer; ``ProviderError('invalid')`` if it is not one."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ProviderError("invalid", f"agent {agent_id!r}: {error.errors()[0]['msg']}") from None
