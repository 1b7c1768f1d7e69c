"""The axes of the routing page's chart: log cost when prices span ten times, a skill axis
fitted to the intervals, ticks where they belong."""

from __future__ import annotations

import pytest

from agentladder.api.svg_axes import cost_axis, skill_axis


def test_costs_spanning_ten_times_get_a_log_axis_with_powers_of_ten() -> None:
    axis = cost_axis([0.001, 0.0015, 0.0029, 0.017, 0.0345], 40, 600)
    assert axis.log
    assert [value for value, _ in axis.ticks()] == pytest.approx([0.001, 0.01])
    # equal ratios, equal distances; the extremes inside the axis, in order
    assert axis.at(0.01) - axis.at(0.001) == pytest.approx(axis.at(0.02) - axis.at(0.002), abs=0.2)
    assert 40 < axis.at(0.001) < axis.at(0.0345) < 600


def test_an_agent_that_costs_nothing_sits_at_the_left_edge_of_a_log_axis() -> None:
    axis = cost_axis([0.0, 0.001, 0.2], 40, 600)
    assert axis.log
    assert axis.at(0.0) == 40
    assert axis.at(0.001) > 40


def test_costs_within_ten_times_keep_a_linear_axis_from_zero() -> None:
    axis = cost_axis([0.01, 0.02, 0.05], 40, 600)
    assert not axis.log
    assert (axis.at(0.0), axis.at(0.05)) == (40, 600)
    assert axis.at(0.025) == pytest.approx(320)


def test_no_costs_at_all_is_a_linear_axis_that_still_draws() -> None:
    axis = cost_axis([0.0, 0.0], 40, 600)
    assert not axis.log
    assert axis.at(0.0) == 40


def test_the_skill_axis_is_fitted_to_the_intervals_in_whole_numbers() -> None:
    axis = skill_axis([5.92, 6.93], [8.48, 9.26], 260, 40)  # a vertical axis: pixels fall
    assert (axis.low, axis.high) == (5.0, 10.0)
    assert [value for value, _ in axis.ticks()] == [5, 6, 7, 8, 9, 10]
    assert axis.at(5.0) == 260
    assert axis.at(10.0) == 40
    assert axis.at(7.5) == pytest.approx(150)


def test_a_narrow_skill_axis_is_at_least_three_points_and_stays_within_0_10() -> None:
    axis = skill_axis([9.6], [9.9], 260, 40)
    assert axis.high == 10.0
    assert axis.high - axis.low >= 3
    wide = skill_axis([0.0], [10.0], 260, 40)
    assert (wide.low, wide.high) == (0.0, 10.0)
    assert [value for value, _ in wide.ticks()] == [0, 2, 4, 6, 8, 10]
    assert skill_axis([], [], 260, 40).high == 10.0
