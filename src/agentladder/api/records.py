"""The deliberation record as the API shows it: ``GET /deliberation/{id}`` and the items of
``GET /deliberations``, typed from the stored ``DeliberationRecord``.

The record answered leaves out ``submissions`` (every call's latency and outcome, the
stats' input); a listed one also leaves out ``rounds`` (follow the id for them). Both
models are the stored record's own fields otherwise, so a client reads them with the
same names and types; the left-out fields are absent from the OpenAPI schema and read
as empty lists.
"""

from __future__ import annotations

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from agentladder.domain.deliberation_record import DeliberationRecord, RoundRecord
from agentladder.domain.ranking import Submission

__all__ = ["LISTED", "SHOWN", "DeliberationOut", "DeliberationSummary"]

SHOWN = frozenset({"submissions"})
"""What ``GET /deliberation/{id}`` leaves out of the stored record."""
LISTED = frozenset({"submissions", "rounds"})
"""What ``GET /deliberations`` leaves out of each record."""


class DeliberationOut(DeliberationRecord):
    """A deliberation from request to result: status, agents, excluded, routing, rounds
    with proposals and evaluations, scores, outcomes, result, the side effects, costs."""

    submissions: SkipJsonSchema[list[Submission]] = Field(default_factory=list, exclude=True)


class DeliberationSummary(DeliberationOut):
    """A deliberation as ``GET /deliberations`` lists it: the record without its rounds
    (``GET /deliberation/{id}`` has them)."""

    rounds: SkipJsonSchema[list[RoundRecord]] = Field(default_factory=list, exclude=True)
