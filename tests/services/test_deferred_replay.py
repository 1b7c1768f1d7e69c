"""History's deferred evidence among current work: whatever mix of judgments of past and
current work, one by one and in batches, repeated with the other ``history`` flag, with
fits between them, the stored skill states are what ``oracle verify`` rebuilds from the
log after every step, on every store; and once fitted, the states are those of the same
judgments all sent as current work, which nothing defers (deferral changes when evidence
counts, never what it says)."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentladder.config import parse_settings
from agentladder.errors import PayloadConflict
from agentladder.services.clock import FixedClock
from agentladder.services.container import build_services
from agentladder.services.oracle.batch import submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.verify import verify_store
from agentladder.services.skill.replay import close
from tests.conftest import BACKENDS, unique_nats_url

judgment = st.fixed_dictionaries(
    {
        "agent_id": st.sampled_from(["a", "b", "c"]),
        "contract_id": st.integers(0, 12).map(lambda n: f"c-{n}"),  # repeats
        "task_type": st.sampled_from(["sql", "code"]),
        "score": st.sampled_from([1.0, 5.5, 9.0]),
        "history": st.booleans(),
    }
)
step = st.one_of(
    st.tuples(st.just("one"), judgment),
    st.tuples(st.just("many"), st.lists(judgment, min_size=1, max_size=6)),
    st.tuples(st.just("fit"), st.none()),
)


START = datetime(2026, 3, 1, tzinfo=UTC)


def _current(steps: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The same steps with every judgment current work."""
    out: list[tuple[str, Any]] = []
    for kind, value in steps:
        if kind == "one":
            out.append((kind, {**value, "history": False}))
        elif kind == "many":
            out.append((kind, [{**v, "history": False} for v in value]))
        else:
            out.append((kind, value))
    return out


async def _run(url: str, steps: list[tuple[str, Any]]) -> tuple[list[bool], Any]:
    services = await build_services(parse_settings(None), store_url=url, clock=FixedClock(START))
    oracle, store, skill = services.oracle, services.store, services.skill
    assert skill is not None
    checks: list[bool] = []
    try:
        for kind, value in steps:
            if kind == "one":
                request = JudgmentRequest(**value, new_agent=True)
                with contextlib.suppress(PayloadConflict):  # another score: refused
                    await oracle.submit_for_judgment(request)
            elif kind == "many":
                await submit_many(oracle, [JudgmentRequest(**v, new_agent=True) for v in value])
            else:
                await skill.fit()
            report = await verify_store(store, services.settings.oracle, skill_rules=skill.rules)
            checks.append(report.ok)
        await skill.fit()
        fitted = {s.agent_id: s for s in await store.list_skills()}
        return checks, fitted
    finally:
        await services.close()


def _url(backend: str, folder: Path, name: str, request: pytest.FixtureRequest) -> str:
    if backend == "memory":
        return "memory://"
    if backend == "nats":
        return unique_nats_url(request.getfixturevalue("session_nats_server").url)
    return f"sqlite:///{folder / name}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_holds_after_every_step_of_any_mix(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Generated steps (derandomized, 12 mixes per store): ``oracle verify`` passes after
    each; the final fit's states equal those of the same steps as current work."""

    @settings(
        max_examples=12, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )  # fmt: skip
    @given(st.lists(step, min_size=1, max_size=10))
    def check(steps: list[tuple[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            here = Path(folder)
            checks, fitted = asyncio.run(_run(_url(backend, here, "a.db", request), steps))
            current = _current(steps)
            _, again = asyncio.run(_run(_url(backend, here, "b.db", request), current))
        assert all(checks), (checks, steps)
        assert fitted.keys() == again.keys()
        for agent, state in fitted.items():
            other = again[agent]
            assert close(
                {k: (e.mean, e.var, e.n) for k, e in state.types.items()},
                {k: (e.mean, e.var, e.n) for k, e in other.types.items()},
            ), agent

    check()
