"""Run a tiny Inspect eval with its mockllm model, offline, and print the log's path.

``python -m tests.importing.tiny_eval LOG_DIR``. Run as a process of its own: inspect_ai's
eval leaves an anyio stream unclosed, which the test suite counts as an error. Its token
counter wants tiktoken's encoding file, which cannot be downloaded here: a count of words
stands in for it.
"""

from __future__ import annotations

import sys
import warnings

import inspect_ai.model._model as inspect_model
import inspect_ai.model._tokens as inspect_tokens
from inspect_ai import Task
from inspect_ai import eval as run_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate


def _local_count(text: str) -> int:
    return len(text.split())


def main(log_dir: str) -> None:
    """Two samples x two epochs, two scorers; print the log's location."""
    inspect_model.count_text_tokens = _local_count  # type: ignore[attr-defined]
    inspect_tokens.count_text_tokens = _local_count
    warnings.simplefilter("ignore")
    task = Task(
        name="tiny_qa",
        dataset=[
            Sample(input="Say 1", target="1", id="s1"),
            Sample(input="Say 2", target="2", id="s2"),
        ],
        solver=generate(),
        scorer=[match(), includes()],
        epochs=2,
    )
    (log,) = run_eval(task, model="mockllm/model", log_dir=log_dir, display="none")
    if log.status != "success":
        raise SystemExit(f"the eval failed: {log.error.message if log.error else log.status}")
    print(log.location)


if __name__ == "__main__":
    main(sys.argv[1])
