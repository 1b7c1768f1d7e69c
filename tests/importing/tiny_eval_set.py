"""Run a tiny Inspect eval set with inspect_ai's own ``eval_set`` and its mockllm models,
offline: two tasks x two models, two samples each, into ``LOG_DIR`` (which then holds
Inspect's ``logs.json``, ``eval-set.json`` and ``.eval-set-id`` beside the four logs).

``python -m tests.importing.tiny_eval_set LOG_DIR``: a process of its own, as
``tiny_eval`` (its token counter stands in for tiktoken's, which cannot be downloaded).
"""

from __future__ import annotations

import sys
import warnings

import inspect_ai.model._model as inspect_model
import inspect_ai.model._tokens as inspect_tokens
from inspect_ai import Task, eval_set
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


def _local_count(text: str) -> int:
    return len(text.split())


def main(log_dir: str) -> None:
    """The eval set; print each log's location."""
    inspect_model.count_text_tokens = _local_count  # type: ignore[attr-defined]
    inspect_tokens.count_text_tokens = _local_count
    warnings.simplefilter("ignore")
    tasks = [
        Task(
            name=name,
            dataset=[
                Sample(input="Say 1", target="1", id="s1"),
                Sample(input="Say 2", target="2", id="s2"),
            ],
            solver=generate(),
            scorer=match(),
        )
        for name in ("set_a", "set_b")
    ]
    done, logs = eval_set(
        tasks, log_dir=log_dir, model=["mockllm/model", "mockllm/other"], display="none"
    )
    if not done:
        raise SystemExit("the eval set did not finish")
    for log in logs:
        print(log.location)


if __name__ == "__main__":
    main(sys.argv[1])
