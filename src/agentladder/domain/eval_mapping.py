"""How a sample of an evaluation log (an Inspect AI log) becomes a judgment: pure rules
over plain values (``agentladder.importing.inspect_logs`` reads the log).

- agent id from a model name: every run of characters outside ``A-Z a-z 0-9 _ . -``
  becomes one ``-`` (so ``openai/gpt-4o`` is ``openai-gpt-4o``), runs of dots are one dot,
  leading and trailing ``.``/``-`` dropped, cut to 64 characters;
- task type from a task name: the same, lowercased, over ``a-z 0-9 _ . -``;
- contract id: ``inspect:<eval id>:<sample id>:<epoch>`` (the SHA-256 of it, as
  ``inspect:sha256:<hex>``, when that is over 256 characters);
- score from a scorer's value: ``C`` (correct) 10, ``P`` (partial) 5, ``I`` (incorrect)
  and ``N`` (no answer) 0, true 10, false 0, a number in [0, 1] times 10, a number in
  (1, 10] as it is; anything else is refused;
- success: a score of at least ``SUCCESS_FROM`` (5); a sample that errored failed;
- cost: input and output tokens at the agent's prices per million tokens.
"""

from __future__ import annotations

import hashlib
import math
import re

from agentladder.domain.judgment import CONTRACT_ID_MAX
from agentladder.domain.text import reason_invisible

__all__ = [
    "LETTER_SCORES",
    "SUCCESS_FROM",
    "agent_id_of",
    "contract_id_of",
    "normalized_score",
    "task_type_of",
    "token_cost",
]

LETTER_SCORES = {"C": 10.0, "P": 5.0, "I": 0.0, "N": 0.0}
"""Inspect's CORRECT, PARTIAL, INCORRECT and NOANSWER values on the 0-10 scale."""
SUCCESS_FROM = 5.0
"""The lowest normalized score that counts as a successful task."""
_NAME_MAX = 64
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_NOT_TYPE = re.compile(r"[^a-z0-9_.-]+")
_DOTS = re.compile(r"\.{2,}")


def _cleaned(value: str, outside: re.Pattern[str]) -> str:
    text = _DOTS.sub(".", outside.sub("-", value))
    return text[:_NAME_MAX].strip(".-")


def agent_id_of(model: str) -> str | None:
    """The agent id a model name maps to without ``--agent``; None when nothing is left."""
    return _cleaned(model, _NOT_NAME) or None


def task_type_of(task: str) -> str | None:
    """The task type of a task name; None when nothing is left."""
    return _cleaned(task.lower(), _NOT_TYPE) or None


def contract_id_of(eval_id: str, sample_id: int | str, epoch: int) -> str:
    """The stable contract id of one sample's epoch of one evaluation run."""
    plain = f"inspect:{eval_id}:{sample_id}:{epoch}"
    if len(plain) <= CONTRACT_ID_MAX and plain.isprintable() and reason_invisible(plain) is None:
        return plain
    return "inspect:sha256:" + hashlib.sha256(plain.encode()).hexdigest()


def normalized_score(value: object) -> float | None:
    """A scorer's value on the 0-10 scale; None for a value the rules do not map."""
    if isinstance(value, bool):
        return 10.0 if value else 0.0
    if isinstance(value, str):
        return LETTER_SCORES.get(value.strip().upper())
    if isinstance(value, int | float) and math.isfinite(value):
        number = float(value)
        if 0.0 <= number <= 1.0:
            return number * 10.0
        if 1.0 < number <= 10.0:
            return number
    return None


def token_cost(
    input_tokens: int, output_tokens: int, input_price_per_mtok: float, output_price_per_mtok: float
) -> float:
    """The cost of the tokens at prices per million tokens."""
    return (input_tokens * input_price_per_mtok + output_tokens * output_price_per_mtok) / 1e6
