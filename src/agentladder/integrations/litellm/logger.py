"""``LadderLogger``: LiteLLM's callback (``CustomLogger``) reporting each call's outcome to
a ladder: its agent's health and stats (``POST /agents/{id}/calls``), and a judgment when
the caller tagged the call with a task type and a score. It never raises into the call:
a report that fails is logged and counted (``failures``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

from agentladder.integrations.litellm.clients import LadderClients
from agentladder.integrations.litellm.reports import Report, report_of
from agentladder.integrations.litellm.settings import LadderSettings

__all__ = ["LadderLogger"]

log = logging.getLogger(__name__)


class LadderLogger(CustomLogger):
    """Each call's outcome to the ladder of ``settings``; ``sent`` and ``failures`` count
    the reports."""

    def __init__(self, settings: LadderSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or LadderSettings()
        self.sent = 0
        self.failures = 0
        self.clients = LadderClients(self.settings)

    def _report(self, kwargs: Any, response: object, start: object, end: object, *,
                failed: bool) -> Report | None:  # fmt: skip
        if not isinstance(kwargs, Mapping):
            return None
        return report_of(kwargs, response, start, end, self.settings.agents, failed=failed)

    def _failed(self, report: Report, error: Exception) -> None:
        self.failures += 1
        log.warning("agentladder: reporting a call of %s failed: %s", report.agent_id, error)

    def _send(self, report: Report | None) -> None:
        if report is None:
            return
        try:
            ladder = self.clients.sync()
            ladder.record_call(report.agent_id, report.call)
            if report.judgment is not None:
                ladder.judge(report.judgment)
            self.sent += 1
        except Exception as error:  # never into the caller's call
            self._failed(report, error)

    async def _asend(self, report: Report | None) -> None:
        if report is None:
            return
        try:
            ladder = self.clients.running()
            await ladder.record_call(report.agent_id, report.call)
            if report.judgment is not None:
                await ladder.judge(report.judgment)
            self.sent += 1
        except Exception as error:  # never into the caller's call
            self._failed(report, error)

    def log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """A sync call answered."""
        try:
            self._send(self._report(kwargs, response_obj, start_time, end_time, failed=False))
        except Exception as error:
            self.failures += 1
            log.warning("agentladder: a call's report could not be built: %s", error)

    def log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """A sync call failed."""
        try:
            self._send(self._report(kwargs, response_obj, start_time, end_time, failed=True))
        except Exception as error:
            self.failures += 1
            log.warning("agentladder: a call's report could not be built: %s", error)

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """An async call answered."""
        try:
            report = self._report(kwargs, response_obj, start_time, end_time, failed=False)
            await self._asend(report)
        except Exception as error:
            self.failures += 1
            log.warning("agentladder: a call's report could not be built: %s", error)

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """An async call failed."""
        try:
            report = self._report(kwargs, response_obj, start_time, end_time, failed=True)
            await self._asend(report)
        except Exception as error:
            self.failures += 1
            log.warning("agentladder: a call's report could not be built: %s", error)
