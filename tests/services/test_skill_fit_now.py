"""``SharedRun`` and ``SkillService.fit_now``: one fit at a time, shared by the callers who
ask while it runs; the periodic fitter of ``serve`` never runs one beside an admin's; the
schedule it keeps is what answers say as ``next_fit_within_s``."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

import pytest

from agentladder.config import parse_settings
from agentladder.domain.skill.evidence import ModelChange
from agentladder.domain.skill.rules import SkillRules
from agentladder.services.container import build_services
from agentladder.services.skill import fitting
from agentladder.services.skill import service as skill_service
from agentladder.services.skill.fitting import Log
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.services.skill.shared import SharedRun
from agentladder.store.base import Store
from agentladder.store.memory import MemoryStore
from tests.domain.skill_helpers import deliberations, honest

EVENTS = deliberations({"a": 4.0, "b": 6.0, "c": 8.0}, 6, honest(0.5), seed=3, size=3)


class Job:
    """A job whose runs are held until released, counting runs and overlaps."""

    def __init__(self) -> None:
        self.runs = 0
        self.inside = 0
        self.most_inside = 0
        self.gate = asyncio.Event()
        self.fail = False

    async def __call__(self) -> int:
        self.runs += 1
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        try:
            await self.gate.wait()
            if self.fail:
                raise RuntimeError("the store went away")
            return self.runs
        finally:
            self.inside -= 1


async def started(shared: SharedRun[Any], count: int = 1) -> list[asyncio.Task[Any]]:
    """``count`` callers of ``shared``, each started (asked) before the next."""
    tasks = []
    for _ in range(count):
        tasks.append(asyncio.ensure_future(shared()))
        await asyncio.sleep(0)
    return tasks


def test_callers_during_a_run_share_the_one_after_it() -> None:
    """A caller starts a run; four asking while it runs wait for it, then share one more
    run; never two at once; once all have ended a new caller starts a new run."""

    async def main() -> None:
        job = Job()
        shared = SharedRun(job)
        first = await started(shared)
        later = await started(shared, 4)
        assert shared.running
        assert job.runs == 1
        job.gate.set()
        assert await first[0] == 1
        assert await asyncio.gather(*later) == [2] * 4
        assert (job.runs, job.most_inside) == (2, 1)
        assert not shared.running
        assert await shared() == 3

    asyncio.run(main())


def test_a_run_goes_on_when_its_caller_goes_away_and_a_failure_reaches_every_caller() -> None:
    """The caller who started a run is cancelled: the run goes on and the others get it.
    A failing run raises to each of its callers; the next call runs again."""

    async def main() -> None:
        job = Job()
        shared = SharedRun(job)
        (leaver,) = await started(shared)
        (stayer,) = await started(shared)
        leaver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await leaver
        assert shared.running
        job.gate.set()
        assert await stayer == 2
        assert job.runs == 2
        job.fail = True
        callers = await started(shared, 2)
        for caller in callers:
            with pytest.raises(RuntimeError, match="went away"):
                await caller
        job.fail = False
        assert await shared() == job.runs

    asyncio.run(main())


def test_close_cancels_the_runs_in_flight_and_waiting() -> None:
    """``close`` ends the run in flight and the one waiting; their callers are cancelled."""

    async def main() -> None:
        job = Job()
        shared = SharedRun(job)
        callers = await started(shared, 3)
        await shared.close()
        assert not shared.running
        for caller in callers:
            with pytest.raises(asyncio.CancelledError):
                await caller
        assert job.runs == 1  # the one waiting never started

    asyncio.run(main())


def test_fit_now_never_runs_two_fits_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forced fit (``agentladder skill rebuild``), six callers of ``fit_now`` and more
    evidence arriving between them: the log is read by one fit at a time; the callers who
    came while a fit ran get the fit after it, which read every event stored before they
    asked."""
    reading = {"now": 0, "most": 0}
    read_log = fitting.read_log

    async def counted(store: Store, upto: int | None = None) -> Log:
        reading["now"] += 1
        reading["most"] = max(reading["most"], reading["now"])
        try:
            await asyncio.sleep(0.01)
            return await read_log(store, upto)
        finally:
            reading["now"] -= 1

    monkeypatch.setattr(skill_service, "read_log", counted)  # the name the service calls

    async def main() -> None:
        store = MemoryStore()
        skill = SkillService(store)
        for event in EVENTS[:3]:
            await skill.observe(event)
        forced = asyncio.ensure_future(skill.fit(force=True))
        first = await started(skill.fit_now, 3)
        for event in EVENTS[3:]:
            await skill.observe(event)
        second = await started(skill.fit_now, 3)
        reports = await asyncio.gather(forced, *first, *second)
        assert reading["most"] == 1
        last = (await store.skill_events(limit=100))[-1].seq
        assert {r.seq for r in reports[-3:]} == {last}
        assert (await skill.freshness()).pending == 0

    asyncio.run(main())


def test_the_periodic_fitter_shares_an_admins_fit_and_says_when_it_looks_next() -> None:
    """Served services fitting every 0.2 s: evidence pending says the next look within
    0.2 s; an admin's ``fit_now`` beside the fitter's passes never overlaps a fit; with
    nothing pending the answer says no fit is due; stopped, no schedule is said."""

    async def main() -> None:
        settings = parse_settings({"skill": {"fit_interval_s": 0.2}})
        services = await build_services(settings, store_url="memory://")
        skill = services.skill
        fits: list[tuple[float, float]] = []
        fit = skill.fit

        async def timed(*, force: bool = False) -> Any:
            loop = asyncio.get_running_loop()
            began = loop.time()
            report = await fit(force=force)
            fits.append((began, loop.time()))
            return report

        skill.fit_now = SharedRun(timed)
        try:
            services.start_background()
            await skill.observe(EVENTS[0])
            await asyncio.sleep(0)
            ahead = await skill.freshness()
            assert ahead.pending == 1
            assert ahead.next_fit_within_s is not None
            assert 0.0 <= ahead.next_fit_within_s <= 0.2
            for event in EVENTS[1:]:
                await skill.observe(event)
                await skill.fit_now()
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            done = await skill.freshness()
            assert (done.pending, done.next_fit_within_s) == (0, None)
            assert len(fits) >= len(EVENTS)
            spans = sorted(fits)
            assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
        finally:
            await services.close()
        assert skill.schedule.within(pending=1, running=False) is None

    asyncio.run(main())


def test_a_log_of_model_changes_only_fits_to_no_state() -> None:
    """An agent's new model before any score (a heartbeat's model change) is the whole log:
    the fit has nothing to solve and records its fit of one event, no observation, no state
    (the solver refused the empty system: ``POST /skills/fit`` answered 500). ``verify``
    agrees."""

    async def main() -> None:
        store = MemoryStore()
        skill = SkillService(store)
        change = ModelChange(key="model:a:1", at=1.0, agent_id="a", model_name="m2")
        await skill.observe(change)
        assert (await skill.freshness()).pending == 1
        report = await skill.fit()
        assert (report.ran, report.events) == (True, 1)
        fleet = await store.get_fleet_skill()
        assert fleet.fit is not None
        assert (fleet.fit.events, fleet.fit.observations) == (1, 0)
        assert await store.list_skills() == []
        assert (await skill.freshness()).pending == 0
        assert (await verify_skills(store, SkillRules())).differences == []

    asyncio.run(main())
