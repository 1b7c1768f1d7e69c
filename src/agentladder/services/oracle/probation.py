"""Which agents are on probation now, for ``/metrics`` and the dashboard."""

from __future__ import annotations

from collections import Counter

from agentladder.domain.probation import RateReason, streams_on_probation
from agentladder.services.oracle.service import Oracle

__all__ = ["probation_census"]


async def probation_census(oracle: Oracle) -> Counter[str]:
    """Agents on probation in any stream, each counted once: ``model_change`` when a model
    change is why (in some stream), else ``probation``. Both labels are always present."""
    census: Counter[str] = Counter(
        {RateReason.PROBATION.value: 0, RateReason.MODEL_CHANGE.value: 0}
    )
    for profile in await oracle.store.list_profiles():
        if not profile.probation:
            continue
        streams = streams_on_probation(profile, oracle.rules, oracle.sentinel)
        if streams:
            reasons = {rate.reason for rate in streams.values()}
            cause = (
                RateReason.MODEL_CHANGE
                if RateReason.MODEL_CHANGE in reasons
                else RateReason.PROBATION
            )
            census[cause.value] += 1
    return census
