"""Real Inspect AI logs for the tests, written with inspect_ai's own log types and writer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalSample,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import GenerateConfig, ModelOutput, ModelRequestId, ModelUsage
from inspect_ai.scorer import Score


def sample(
    sample_id: int | str,
    epoch: int = 1,
    scores: dict[str, Any] | None = None,
    *,
    error: str | None = None,
    working_time: float | None = 2.5,
    tokens: tuple[int, int] = (1000, 500),
    model: str = "openai/gpt-4o-mini",
    served: str = "",
    failed_call: str | None = None,
    request_ids: tuple[str, ...] = (),
) -> EvalSample:
    """One sample: its scores by scorer name (values), its usage and working time; the
    model its provider says answered (``served``: ``output.model``); a model call that
    failed with ``failed_call`` (its event's error) among its events; ``request_ids``: an
    answered model call whose response carried them in ``x-request-id``."""
    events = []
    if request_ids:
        events.append(
            ModelEvent(
                model=model, input=[], tools=[], tool_choice="none", config=GenerateConfig(),
                output=ModelOutput(model=served),
                request_ids=[ModelRequestId(id=one, header="x-request-id", status=200)
                             for one in request_ids],
            )
        )  # fmt: skip
    if failed_call is not None:
        events.append(
            ModelEvent(
                model=model, input=[], tools=[], tool_choice="none", config=GenerateConfig(),
                output=ModelOutput(model=served), error=failed_call,
            )
        )  # fmt: skip
    return EvalSample(
        output=ModelOutput(model=served),
        events=events,
        id=sample_id,
        epoch=epoch,
        input="question",
        target="answer",
        scores=None if scores is None else {k: Score(value=v) for k, v in scores.items()},
        error=None if error is None else EvalError(message=error, traceback="", traceback_ansi=""),
        working_time=working_time,
        total_time=None if working_time is None else working_time + 1.0,
        model_usage={
            model: ModelUsage(
                input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens)
            )
        },
    )


def write_log(
    path: Path,
    samples: list[EvalSample],
    *,
    eval_id: str = "evalAbc123",
    task: str = "Math/GSM8K",
    model: str = "openai/gpt-4o-mini",
) -> Path:
    """A finished log of ``samples`` at ``path`` (``.eval`` or ``.json``, by suffix)."""
    spec = EvalSpec(
        eval_id=eval_id,
        run_id="run1",
        created="2026-01-01T00:00:00+00:00",
        task=task,
        dataset=EvalDataset(name="questions"),
        model=model,
        config=EvalConfig(),
    )
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
    return path
