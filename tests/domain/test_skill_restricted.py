"""Many estimates restricted to the scale at once read as each does alone: the array
version of ``gauss.on_scale`` gives its values, far off the scale, at its ends and at
sds from 1e-6 to 1,000; and ``on_scale`` holds its digits 5 to 7 sd off the scale."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import truncnorm

from agentladder.domain.skill.gauss import on_scale
from agentladder.domain.skill.restricted import on_scale_many

Z = 1.959963984540054
MEANS = st.one_of(
    st.floats(-50.0, 60.0), st.floats(-1e6, 1e6), st.sampled_from([0.0, 5.0, 10.0, 9.999, 1e-9])
)
SDS = st.one_of(st.floats(1e-6, 3.0), st.floats(1e-6, 1e3), st.sampled_from([1e-6, 0.05, 1.0]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(MEANS, SDS), min_size=1, max_size=40))
def test_the_array_version_reads_as_each_estimate_alone(values: list[tuple[float, float]]) -> None:
    """Every mean and interval end within 1e-9 of ``on_scale``'s, and on the scale; the sd
    within 1e-8 of it (an sd of hundreds restricted to 0-10 is nearly the uniform's, 2.89,
    reached by a difference of numbers near 1: the two implementations of the normal
    distribution part there in the ninth digit)."""
    mean = np.array([m for m, _ in values])
    sd = np.array([s for _, s in values])
    many = on_scale_many(mean, sd, Z)
    for i, (m, s) in enumerate(values):
        got = [float(column[i]) for column in many]
        alone = on_scale(m, s, Z)
        for k in (0, 2, 3):
            assert math.isclose(got[k], alone[k], abs_tol=1e-9), (m, s, got, alone)
        assert math.isclose(got[1], alone[1], rel_tol=1e-8), (m, s, got, alone)
        assert 0.0 <= got[2] <= got[0] <= got[3] <= 10.0


def test_an_estimate_seven_sd_below_the_scale_keeps_its_digits() -> None:
    """A mean of -17.2 with sd 2.45 (the scale 7 sd above it): restricted, the part just
    above 0, as scipy's truncated normal reads it (mean 0.3367, sd 0.3308, to 1e-9).
    ``on_scale`` took 1 - Φ by ``NormalDist.cdf`` (1 + erf), which keeps four digits
    there, and read a mean of 0.3357 and an sd of 0.355."""
    centre, spread = -17.23275279080336, 2.454422400310831
    mean, sd, low, high = on_scale(centre, spread, Z)
    truth = truncnorm((0.0 - centre) / spread, (10.0 - centre) / spread, loc=centre, scale=spread)
    assert math.isclose(mean, float(truth.mean()), rel_tol=1e-9)
    assert math.isclose(sd, float(truth.std()), rel_tol=1e-9)
    assert math.isclose(low, float(truth.ppf(0.025)), rel_tol=1e-3)
    assert math.isclose(high, float(truth.ppf(0.975)), rel_tol=1e-3)
    many = on_scale_many(np.array([centre]), np.array([spread]), Z)
    assert math.isclose(sd, float(many[1][0]), rel_tol=1e-9)
