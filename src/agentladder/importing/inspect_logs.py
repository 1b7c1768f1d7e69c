"""Inspect AI logs (``.eval`` and ``.json``), read with inspect_ai's own reader: each
sample of each epoch becomes one judgment by the rules of ``domain.eval_mapping``.

inspect_ai is the optional extra ``agentladder[inspect]``; it is imported when a log is
read, so that the rest of agentladder never needs it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentladder.domain.agents import AgentConfig
from agentladder.domain.eval_mapping import (
    SUCCESS_FROM,
    agent_id_of,
    contract_id_of,
    normalized_score,
    task_type_of,
    token_cost,
)
from agentladder.errors import InvalidInput, shown_value
from agentladder.importing.items import Item, validation_line
from agentladder.services.oracle.models import JudgmentRequest

__all__ = ["LOG_SUFFIXES", "InspectOptions", "read_inspect_log"]

LOG_SUFFIXES = (".eval", ".json")


class InspectOptions:
    """How logs map: model name -> agent id, a task type for all, the scorer to use, and
    the configured agents (their prices)."""

    def __init__(
        self,
        agents: Mapping[str, str] | None = None,
        task_type: str | None = None,
        scorer: str | None = None,
        configs: Mapping[str, AgentConfig] | None = None,
    ) -> None:
        self.agents = dict(agents or {})
        self.task_type = task_type
        self.scorer = scorer
        self.configs = dict(configs or {})


def _reader() -> Any:
    try:
        from inspect_ai.log import read_eval_log  # noqa: PLC0415 (the optional extra)
    except ImportError:
        raise InvalidInput(
            "--format", "inspect", "needs inspect_ai: pip install 'agentladder[inspect]'"
        ) from None
    return read_eval_log


def read_inspect_log(path: Path, options: InspectOptions) -> Iterator[Item]:
    """Every sample x epoch of the log at ``path`` as an item, in the log's order."""
    read_eval_log = _reader()
    try:
        # On a thread of its own: called where an event loop runs (the import's), the
        # reader patches asyncio to re-enter it (nest_asyncio); with none it runs its own.
        with ThreadPoolExecutor(1, thread_name_prefix="agentladder-inspect") as reader:
            log = reader.submit(read_eval_log, str(path)).result()
    except Exception as error:  # inspect_ai raises many kinds for a file it cannot read
        reason = f"cannot be read as an Inspect log: {type(error).__name__}: {error}"
        yield Item(str(path), error=f"file: {reason[:200]} ({shown_value(str(path))})")
        return
    spec = log.eval
    model = str(spec.model)
    agent_id = options.agents.get(model) or agent_id_of(model)
    task_type = options.task_type or task_type_of(str(spec.task))
    for sample in log.samples or []:
        where = f"{path}#{sample.id}/{sample.epoch}"
        if agent_id is None:
            reason = "cannot be made an agent id; map it with --agent MODEL=AGENT_ID"
            yield Item(where, error=f"model: {reason} ({shown_value(model)})")
            continue
        if task_type is None:
            reason = "cannot be made a task type; give one with --task-type"
            yield Item(where, error=f"task: {reason} ({shown_value(spec.task)})")
            continue
        yield _item(where, sample, str(spec.eval_id), model, agent_id, task_type, options)


def _item(
    where: str,
    sample: Any,
    eval_id: str,
    model: str,
    agent_id: str,
    task_type: str,
    options: InspectOptions,
) -> Item:
    if sample.error is not None:
        score, success = 0.0, False
    else:
        scored = _score(sample.scores or {}, options.scorer)
        if isinstance(scored, str):
            return Item(where, error=scored)
        score, success = scored, scored >= SUCCESS_FROM
    working = sample.working_time
    try:
        request = JudgmentRequest(
            agent_id=agent_id,
            contract_id=contract_id_of(eval_id, sample.id, sample.epoch),
            task_type=task_type,
            score=score,
            success=success,
            duration_ms=None if working is None else float(working) * 1000.0,
            cost=_cost(sample.model_usage or {}, options.configs.get(agent_id)),
            provider=model.split("/", 1)[0] if "/" in model else "",
            model=model[:128],
        )
    except ValidationError as error:
        return Item(where, error=validation_line(error, "sample"))
    return Item(where, request)


def _score(scores: Mapping[str, Any], scorer: str | None) -> float | str:
    """The normalized score of the chosen scorer, or the one-line reason there is none."""
    if scorer is not None:
        if scorer not in scores:
            names = ", ".join(sorted(scores)) or "none"
            return f"scores: no scorer {scorer!r} in this sample (it has {names}) ({scorer!r})"
        name = scorer
    elif len(scores) == 1:
        (name,) = scores
    elif not scores:
        return "scores: the sample has no score and no error (None)"
    else:
        names = ", ".join(sorted(scores))
        return f"scores: several scorers, choose one with --scorer ({names})"
    value = scores[name].value
    normalized = normalized_score(value)
    if normalized is None:
        reason = "is not C, P, I, N, a boolean, or a number in 0-1 or 0-10"
        return f"scores.{name}.value: {reason} ({shown_value(value)})"
    return normalized


def _cost(usage: Mapping[str, Any], config: AgentConfig | None) -> float:
    """The tokens of every model the sample used at the agent's configured prices; without
    prices, the cost Inspect recorded, if any; else 0."""
    inputs = sum(int(u.input_tokens or 0) for u in usage.values())
    outputs = sum(int(u.output_tokens or 0) for u in usage.values())
    if config is not None and (config.input_price_per_mtok or config.output_price_per_mtok):
        return token_cost(
            inputs, outputs, config.input_price_per_mtok, config.output_price_per_mtok
        )
    recorded = [u.total_cost for u in usage.values() if u.total_cost is not None]
    return float(sum(recorded)) if recorded else 0.0
