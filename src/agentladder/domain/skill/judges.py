"""The sources of scores the fit knows, as listed to people (``GET /skills/judges``,
``agentladder skill judges``): each one's leniency, noise, honesty, evidence and weight,
with a warning where its scores count little or where its leniency cannot be learned.

A source is a judge (``judge:<name>``, a gateway client's feedback
``judge:feedback:<client>``), an agent as peer evaluator in its current model
(``agent:<id>``, ``agent:<id>#<k>`` after k model changes) or the aggregated scores of
reported deliberations (``aggregate``): the fleet's state holds the non-agent sources'
records, each agent's state its own as evaluator (``state.py``), all as the last fit left
them.

Its **weight** at a task type is its share of the scale there (``FleetSkill.scales``, as
``GET /skills`` lists it: the evidence-weighted average score the skills are measured
against); the fit records the three largest shares of each task type, so a source below
them has no share recorded there (None) and counts 0 in its overall share. Its
**overall** share is the mean of its shares over the task types that have a scale, each
counting alike (an overall skill is the mean of the task types' skills).

Where the names of the gateway's clients are not shown (to anyone but an admin), every
client's feedback is one source, ``judge:feedback``: its evidence and shares summed, its
leniency, noise and honesty averaged, each client weighed by its evidence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from agentladder.domain.skill.capped import FEEDBACK_SOURCE
from agentladder.domain.skill.observations import agent_source
from agentladder.domain.skill.state import AgentSkill, FleetSkill, SourceState, SourceType

__all__ = [
    "ALONE",
    "FEEDBACK",
    "HONESTY_FLOOR",
    "LITTLE_WEIGHT",
    "SourceAtType",
    "SourceRecord",
    "source_records",
]

HONESTY_FLOOR = 0.5
"""Below this honesty a source's scores count less than half of what its noise alone
would give them: it is warned of (``LITTLE_WEIGHT``)."""
LITTLE_WEIGHT = "its scores are given little weight: they disagree with the other sources'"
ALONE = "alone: its leniency cannot be learned"
"""The warning of a source that is the only one at every task type it scores: nothing
checks its scores, so its leniency is the scale's own, and its honesty is not judged."""
FEEDBACK = FEEDBACK_SOURCE.rstrip(":")
"""Every gateway client's feedback as one source, where the clients' names are not shown."""


class SourceAtType(BaseModel):
    """A source at one task type it scored."""

    model_config = ConfigDict(frozen=True)

    task_type: str
    share: float | None
    leniency: float
    noise_sd: float
    observations: int


class SourceRecord(BaseModel):
    """One source of scores as the last fit left it."""

    model_config = ConfigDict(frozen=True)

    source: str
    observations: int
    leniency: float
    leniency_sd: float
    noise_sd: float
    honesty: float
    share: float
    task_types: tuple[SourceAtType, ...]
    warning: str | None


def _shown_name(name: str, clients: bool) -> str:
    return FEEDBACK if not clients and name.startswith(FEEDBACK_SOURCE) else name


def _mean(values: Sequence[tuple[float, int]]) -> float:
    """The mean of ``values`` weighed by their counts (evenly when every count is 0)."""
    total = sum(n for _, n in values)
    if total == 0:
        return sum(v for v, _ in values) / len(values)
    return sum(v * n for v, n in values) / total


def _merged_type(parts: Sequence[SourceType]) -> SourceType:
    if len(parts) == 1:
        return parts[0]
    return SourceType(
        bias_mean=_mean([(p.bias_mean, p.n) for p in parts]),
        bias_var=_mean([(p.bias_var, p.n) for p in parts]),
        noise_var=_mean([(p.noise_var, p.n) for p in parts]),
        n=sum(p.n for p in parts),
    )


def _merged(parts: Sequence[SourceState]) -> SourceState:
    """Several sources as one (the clients' feedback): counts summed, the rest averaged
    weighed by evidence."""
    if len(parts) == 1:
        return parts[0]
    typed: dict[str, list[SourceType]] = {}
    for part in parts:
        for task_type, here in part.types.items():
            typed.setdefault(task_type, []).append(here)
    return SourceState(
        bias_mean=_mean([(p.bias_mean, p.n) for p in parts]),
        bias_var=_mean([(p.bias_var, p.n) for p in parts]),
        noise_var=_mean([(p.noise_var, p.n) for p in parts]),
        honesty=_mean([(p.honesty, p.n) for p in parts]),
        n=sum(p.n for p in parts),
        types={t: _merged_type(here) for t, here in typed.items()},
    )


def _shares(fleet: FleetSkill, clients: bool) -> dict[str, dict[str, float]]:
    """Each task type's recorded shares by shown name (the clients' summed when not shown)."""
    out: dict[str, dict[str, float]] = {}
    for task_type, listed in fleet.scales.items():
        here = out[task_type] = {}
        for name, share in listed:
            shown = _shown_name(name, clients)
            here[shown] = here.get(shown, 0.0) + share
    return out


def _warning(
    name: str, state: SourceState, shares: Mapping[str, Mapping[str, float]]
) -> str | None:
    """``ALONE`` when it is the only source recorded at every task type it scores, else
    ``LITTLE_WEIGHT`` when its honesty is below ``HONESTY_FLOOR``."""
    checked = [shares[t] for t in state.types if t in shares]
    if checked and all(set(here) <= {name} for here in checked):
        return ALONE
    if state.honesty < HONESTY_FLOOR:
        return LITTLE_WEIGHT
    return None


def _record(
    name: str, state: SourceState, shares: Mapping[str, Mapping[str, float]]
) -> SourceRecord:
    typed = tuple(
        SourceAtType(
            task_type=t,
            share=None if (found := shares.get(t, {}).get(name)) is None else round(found, 4),
            leniency=round(here.bias_mean, 4),
            noise_sd=round(math.sqrt(here.noise_var), 4),
            observations=here.n,
        )
        for t, here in sorted(state.types.items())
    )
    overall = sum(here.get(name, 0.0) for here in shares.values()) / len(shares) if shares else 0.0
    return SourceRecord(
        source=name,
        observations=state.n,
        leniency=round(state.bias_mean, 4),
        leniency_sd=round(math.sqrt(state.bias_var), 4),
        noise_sd=round(math.sqrt(state.noise_var), 4),
        honesty=round(state.honesty, 4),
        share=round(overall, 4),
        task_types=typed,
        warning=_warning(name, state, shares),
    )


def source_records(
    fleet: FleetSkill, skills: Iterable[AgentSkill], *, clients: bool
) -> list[SourceRecord]:
    """Every source of scores the last fit knows (the non-agent ones of ``fleet``, each
    agent of ``skills`` that evaluated in its current model), by evidence, most first
    (ties by name); ``clients``: each gateway client's feedback named, else one source."""
    grouped: dict[str, list[SourceState]] = {}
    for name, state in fleet.sources.items():
        grouped.setdefault(_shown_name(name, clients), []).append(state)
    for skill in skills:
        if skill.evaluator.n > 0:
            grouped[agent_source(skill.agent_id, skill.model_changes)] = [skill.evaluator]
    shares = _shares(fleet, clients)
    records = [_record(name, _merged(parts), shares) for name, parts in grouped.items()]
    return sorted(records, key=lambda r: (-r.observations, r.source))
