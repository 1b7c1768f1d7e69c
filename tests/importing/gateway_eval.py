"""Run a tiny Inspect eval through agentladder's gateway and print the log's path.

``python -m tests.importing.gateway_eval LOG_DIR BASE_URL MODEL...`` with
``OPENAI_API_KEY`` the gateway's client token: Inspect's own ``openai`` provider (each
``MODEL``, such as ``openai/route:audit``, one log each) at ``BASE_URL``. Four samples
scored by ``includes()``, one at a time; the fourth's solver first asks the agent its
``first`` metadata names (``openai/<agent>``, a second model call of the sample), then
the eval's model, whose answer is scored. Run as a process of its own, as
``tiny_eval.py`` is (and with its count of words for tokens).
"""

from __future__ import annotations

import sys
import warnings

import inspect_ai.model._model as inspect_model
import inspect_ai.model._tokens as inspect_tokens
from inspect_ai import Task
from inspect_ai import eval as run_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver

from tests.importing.tiny_eval import _local_count


@solver
def answer(base_url: str) -> Solver:
    """The eval's model answers; a sample whose metadata names ``first`` asks that agent
    before."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        first = state.metadata.get("first")
        if isinstance(first, str):
            await get_model(f"openai/{first}", base_url=base_url).generate(state.input_text)
        return await generate(state)

    return solve


def main(log_dir: str, base_url: str, models: list[str]) -> None:
    """Run it with each model; print each log's location."""
    inspect_model.count_text_tokens = _local_count  # type: ignore[attr-defined]
    inspect_tokens.count_text_tokens = _local_count
    warnings.simplefilter("ignore")
    task = Task(
        name="gateway_qa",
        dataset=[
            Sample(input="Who answers?", target="answer from", id="s1"),
            Sample(input="Who answers now?", target="answer from", id="s2"),
            Sample(input="Say nothing.", target="silence", id="s3"),
            Sample(
                input="Who answers last?", target="answer from", id="s4", metadata={"first": "zeta"}
            ),
        ],
        solver=answer(base_url),
        scorer=includes(),
    )
    for model in models:
        (log,) = run_eval(
            task, model=model, model_base_url=base_url, log_dir=log_dir, display="none",
            max_connections=1, max_samples=1,
        )  # fmt: skip
        if log.status != "success":
            failed = log.error.message if log.error else log.status
            raise SystemExit(f"the eval of {model} failed: {failed}")
        print(log.location)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
