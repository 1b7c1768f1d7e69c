"""schemathesis against a real `agentladder serve`: no 5xx, no response outside the schema.

The command-line run covers every operation (examples, coverage, fuzzing); the stateful
runs follow the OpenAPI links (``api/schemas.py``: heartbeat -> the agent and its
privileges, judgment -> profile, ledger, validation rate and a validation, deliberation
or report -> the record) with an admin token, so that writes are accepted: a short one
here, a three-minute one marked ``faults`` (``make test-faults``).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from schemathesis import Case, Response
from schemathesis.checks import not_a_server_error
from schemathesis.generation.stateful.state_machine import APIStateMachine
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.api.test_hostile_served import ADMIN as SERVED_ADMIN
from tests.api.test_hostile_served import CONFIG as SERVED_CONFIG
from tests.api.test_serve import CONFIG
from tests.served import start_server


def test_schemathesis_finds_no_server_error_and_no_schema_break(tmp_path: Path) -> None:
    """Examples, coverage and fuzzing phases over every operation, a fixed seed, bounded.
    Not the command line's stateful phase: on this configuration it followed 0 of the 19
    links and reached 3 operations (155 calls, 5 s); the stateful runs below follow them,
    their service accepting new agents' judgments."""
    server = start_server(tmp_path, CONFIG, db="st.db")
    try:
        result = subprocess.run(
            [
                str(Path(sys.executable).with_name("st")), "run",
                server.url("/openapi.json"),
                "--checks", "not_a_server_error,response_schema_conformance",
                "--max-examples", "25", "--seed", "2026", "--no-color",
                "--phases", "examples,coverage,fuzzing",
            ],
            check=False, capture_output=True, text=True, timeout=300, env=dict(os.environ),
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout[-4000:]
    assert "generated" in result.stdout


def run_stateful(folder: Path, *, examples: int, seconds: float, seed: int) -> Counter[str]:
    """schemathesis's state machines (from the OpenAPI links) against a served instance
    with an admin token, again and again until ``seconds`` are spent: no 5xx, every
    response in its schema. Three machines, each with its own entry points: the
    deliberations, the remote agents' tasks, and the agents with the Oracle (schemathesis
    starts from one group's writes only). Each repetition of each machine draws from its
    own seed, derived from ``seed``, so a run makes the same requests every time.
    The calls made, by ``METHOD path status``."""
    # Judgments of generated ids would be refused as typos (the default, docs/oracle.md),
    # and the judgment -> profile links hardly ever followed; this service takes new ids
    # as one fed by another orchestrator's judgments would.
    accepting = SERVED_CONFIG + "oracle: {accept_unregistered: true}\n"
    server = start_server(folder, accepting, db="stateful.db")
    calls: Counter[str] = Counter()
    try:
        schema = schemathesis.openapi.from_url(server.url("/openapi.json"))
        machines = [
            schema.include(path_regex="^/deliberation").as_state_machine(),
            schema.exclude(path_regex="^/(deliberation|agents/tasks)").as_state_machine(),
            schema.include(path_regex="^/agents/tasks").as_state_machine(),
        ]
        settings = hypothesis.settings(
            max_examples=examples, stateful_step_count=10, deadline=None, database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )  # fmt: skip
        deadline = time.monotonic() + seconds
        for repetition in itertools.count():
            for index, machine in enumerate(machines):
                drawn = seed * 1000 + repetition * len(machines) + index
                try:
                    hypothesis.seed(drawn)(workflow(machine, calls)).run(settings=settings)
                except hypothesis.errors.FlakyStrategyDefinition:
                    # The server keeps its state between examples (a contract judged once
                    # is a 409 the next time), so which links can be followed changes and
                    # hypothesis may find a replayed prefix drawing differently. That is
                    # the generator's bookkeeping, not a check: a 5xx or a schema break
                    # raises its own error. Start the machine again.
                    calls["(generation restarted) -"] += 1
            if time.monotonic() >= deadline:
                break
    finally:
        output = server.stop()
    assert "Traceback" not in output, around(output, "Traceback")
    return calls


def around(output: str, word: str) -> str:
    """The lines of ``output`` from a few before the first ``word`` to 40 after it."""
    lines = output.splitlines()
    first = next(index for index, line in enumerate(lines) if word in line)
    return "\n".join(lines[max(0, first - 5) : first + 40])


def workflow(machine: type[APIStateMachine], calls: Counter[str]) -> type[APIStateMachine]:
    """``machine`` with the admin token, counting calls, checking 5xx and schemas only."""

    class Workflow(machine):  # type: ignore[valid-type, misc]
        def get_call_kwargs(self, case: Case[Any]) -> dict[str, Any]:
            return {"headers": {"authorization": f"Bearer {SERVED_ADMIN}"}, "timeout": 30}

        def after_call(self, response: Response, case: Case[Any]) -> None:
            calls[f"{case.method} {case.path} {response.status_code}"] += 1

        def validate_response(
            self, response: Response, case: Case[Any], additional_checks: Any = None, **kwargs: Any
        ) -> None:
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance],
                transport_kwargs=kwargs,
            )  # fmt: skip

    return Workflow


def _summary(calls: Counter[str]) -> str:
    return "\n".join(f"{count:6d} {call}" for call, count in sorted(calls.items()))


def test_stateful_links_short(tmp_path: Path) -> None:
    """The stateful run, short (about 20 s): chains are followed, nothing breaks."""
    calls = run_stateful(tmp_path, examples=12, seconds=0, seed=2026)
    print(f"stateful (short): {sum(calls.values())} calls\n{_summary(calls)}")
    assert not any(call.endswith((" 500", " 502", " 503")) for call in calls)
    followed = {call.rsplit(" ", 1)[0] for call in calls if call.endswith(" 200")}
    assert "GET /agents/{agent_id}" in followed  # heartbeat -> the agent
    assert "GET /oracle/profiles/{agent_id}" in followed  # judgment -> the profile


@pytest.mark.faults
def test_stateful_links_for_minutes(tmp_path: Path) -> None:
    """The stateful run for three minutes (``make test-faults``): no 5xx, no schema break."""
    started = time.monotonic()
    calls = run_stateful(tmp_path, examples=50, seconds=180, seed=2027)
    took = time.monotonic() - started
    print(f"stateful (long): {sum(calls.values())} calls in {took:.0f} s\n{_summary(calls)}")
    assert took >= 180
    assert sum(calls.values()) > 1000
    assert not any(call.rsplit(" ", 1)[1].startswith("5") for call in calls)
