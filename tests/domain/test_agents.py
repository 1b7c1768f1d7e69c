"""Agent names, agent config parsing and the estimated cost per round."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentladder.domain.agents import (
    AGENT_NAME_PATTERN,
    INPUT_TOKENS_PER_ROUND,
    OUTPUT_TOKENS_PER_ROUND,
    AgentConfig,
    estimated_cost_per_round,
    parse_agents,
    validate_agent_name,
)
from agentladder.errors import InvalidInput

SEED_YAML = """\
agents:
  - name: "audit_expert"
    provider_id: "openai"
    model_name: "gpt-4o"
    description: "Financial audit specialist — compliance, risk, regulatory analysis"
    capability_tags: ["audit", "compliance", "legal", "financial"]
    signing_schemes: ["eip712"]    # placeholder for future crypto signing
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0
"""

BAD_NAMES = ["", "a" * 65, "../x", "a b", "a*", "a>", ".", "..", ".x", "x.", "a..b", "a/b", "é"]
GOOD_NAMES = ["a", "A", "audit_expert", "agent-a", "gpt-4o.mini", "a" * 64, "_", "-", "0"]


# Names


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_valid_names_are_returned_unchanged(name: str) -> None:
    """A name of 1..64 safe characters not starting or ending with '.' is accepted."""
    assert validate_agent_name(name) == name


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused_naming_field_and_value(name: str) -> None:
    """Empty, too long, unsafe or dot-edged names raise InvalidInput naming field and value."""
    with pytest.raises(InvalidInput) as caught:
        validate_agent_name(name, field="agent_name")
    assert caught.value.field == "agent_name"
    assert caught.value.value == name
    assert repr(name) in str(caught.value)


def test_a_trailing_newline_does_not_slip_past_the_pattern() -> None:
    """'$' in the pattern does not let 'name\\n' through: the whole string must match."""
    with pytest.raises(InvalidInput):
        validate_agent_name("abc\n")


def test_a_non_string_name_is_refused() -> None:
    """A name that is not a string is refused rather than coerced."""
    with pytest.raises(InvalidInput) as caught:
        validate_agent_name(123)  # type: ignore[arg-type]
    assert caught.value.field == "name"


@given(st.from_regex(AGENT_NAME_PATTERN, fullmatch=True))
def test_every_accepted_name_is_a_valid_nats_kv_key(name: str) -> None:
    """Every accepted name matches the pattern and has no empty NATS subject token."""
    try:
        validate_agent_name(name)
    except InvalidInput:
        assert name.startswith(".") or name.endswith(".") or ".." in name
    else:
        assert all(name.split("."))
        assert len(name) <= 64


# Cost


def test_seed_constants_are_4000_and_1500_tokens() -> None:
    """A round is estimated at 4000 input and 1500 output tokens per agent."""
    assert (INPUT_TOKENS_PER_ROUND, OUTPUT_TOKENS_PER_ROUND) == (4000, 1500)


def test_gpt_4o_prices_cost_0_025_per_round() -> None:
    """2.5 $/Mtok in and 10 $/Mtok out cost (4000*2.5 + 1500*10)/1e6 = 0.025 per round."""
    assert estimated_cost_per_round(2.5, 10.0) == 0.025


def test_free_agent_costs_nothing() -> None:
    """Prices of 0 (the default) give a cost of 0."""
    assert estimated_cost_per_round(0, 0) == 0.0


@given(
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_cost_is_the_seed_formula(input_price: float, output_price: float) -> None:
    """The cost is (4000 * input + 1500 * output) / 1_000_000 for any valid prices."""
    expected = (4000 * input_price + 1500 * output_price) / 1_000_000
    assert estimated_cost_per_round(input_price, output_price) == expected


@pytest.mark.parametrize("bad", [-0.01, math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("field", ["input_price_per_mtok", "output_price_per_mtok"])
def test_bad_prices_are_refused_naming_field_and_value(field: str, bad: float) -> None:
    """Negative, NaN or infinite prices raise InvalidInput naming the price and the value."""
    prices = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0, field: bad}
    with pytest.raises(InvalidInput) as caught:
        estimated_cost_per_round(**prices)
    assert caught.value.field == field
    assert repr(bad) in str(caught.value)


# AgentConfig


def test_seed_yaml_example_parses_verbatim() -> None:
    """The seed's YAML example, loaded verbatim, gives one fully populated agent."""
    (agent,) = parse_agents(yaml.safe_load(SEED_YAML))
    assert agent.name == "audit_expert"
    assert agent.provider_id == "openai"
    assert agent.model_name == "gpt-4o"
    assert agent.description.startswith("Financial audit specialist")
    assert agent.capability_tags == ("audit", "compliance", "legal", "financial")
    assert agent.signing_schemes == ("eip712",)
    assert (agent.input_price_per_mtok, agent.output_price_per_mtok) == (2.5, 10.0)
    assert agent.estimated_cost_per_round == 0.025


def test_only_the_name_is_required() -> None:
    """A config with only a name gets empty strings, empty tags and zero prices."""
    agent = AgentConfig(name="minimal")
    assert agent.provider_id == agent.model_name == agent.description == ""
    assert agent.capability_tags == agent.signing_schemes == ()
    assert agent.estimated_cost_per_round == 0.0


def test_null_fields_take_their_defaults() -> None:
    """A key written without a value in YAML (null) takes the field's default."""
    (agent,) = parse_agents(yaml.safe_load("agents:\n  - name: a\n    description:\n"))
    assert agent.description == ""


def test_unknown_keys_are_ignored() -> None:
    """Keys from older or newer configs are ignored, so such configs keep working."""
    agent = AgentConfig.model_validate({"name": "a", "temperature": 0.2, "rank": 9})
    assert "temperature" not in agent.model_dump()
    assert "rank" not in agent.model_dump()


def test_the_cost_is_part_of_the_dump_and_recomputed_on_load() -> None:
    """The dump shows the cost; loading a dump ignores a stale cost and recomputes it."""
    agent = AgentConfig(name="a", input_price_per_mtok=2.5, output_price_per_mtok=10.0)
    dumped = agent.model_dump()
    assert dumped["estimated_cost_per_round"] == 0.025
    assert AgentConfig.model_validate({**dumped, "estimated_cost_per_round": 99}) == agent


def test_config_is_frozen() -> None:
    """An AgentConfig cannot be changed after it is made."""
    agent = AgentConfig(name="a")
    with pytest.raises(ValidationError):
        agent.name = "b"  # type: ignore[misc]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_model_refuses_bad_names_naming_field_and_value(name: str) -> None:
    """AgentConfig's ValidationError names the 'name' field and the refused value."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig(name=name)
    message = str(caught.value)
    assert "name" in message
    assert repr(name) in message


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_model_refuses_bad_prices_naming_field_and_value(bad: float) -> None:
    """AgentConfig's ValidationError names the price field and the refused value."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig(name="a", output_price_per_mtok=bad)
    message = str(caught.value)
    assert "output_price_per_mtok" in message
    assert f"input_value={bad!r}" in message


@pytest.mark.parametrize("field", ["capability_tags", "signing_schemes"])
def test_empty_tags_are_refused(field: str) -> None:
    """An empty or blank tag is refused; the error names the field and the position."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig.model_validate({"name": "a", field: ["ok", " "]})
    assert f"{field}.1" in str(caught.value)


def test_tags_are_kept_as_given() -> None:
    """Tags are neither lowercased nor stripped."""
    agent = AgentConfig(name="a", capability_tags=("Audit", " legal"))
    assert agent.capability_tags == ("Audit", " legal")


# parse_agents


@pytest.mark.parametrize("data", [None, {}, {"agents": None}, {"agents": []}])
def test_no_agents_section_means_no_agents(data: object) -> None:
    """An empty document, a missing or empty 'agents' key give no agents."""
    assert parse_agents(data) == []


def test_agents_keep_their_order() -> None:
    """parse_agents returns the agents in the order of the config."""
    agents = parse_agents({"agents": [{"name": "b"}, {"name": "a"}]})
    assert [a.name for a in agents] == ["b", "a"]


def test_duplicate_names_are_refused_naming_the_second() -> None:
    """The same name twice raises InvalidInput on agents[i].name with the name."""
    data = {"agents": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}
    with pytest.raises(InvalidInput) as caught:
        parse_agents(data)
    assert caught.value.field == "agents[2].name"
    assert "'a'" in str(caught.value)
    assert "agents[0]" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "field", "value"),
    [
        ([1], "config", [1]),
        ({"agents": {"name": "a"}}, "agents", {"name": "a"}),
        ({"agents": ["a"]}, "agents[0]", "a"),
        ({"agents": [{"name": "ok"}, {"name": "../x"}]}, "agents[1].name", "../x"),
        (
            {"agents": [{"name": "a", "input_price_per_mtok": -2}]},
            "agents[a].input_price_per_mtok",
            -2,
        ),
        ({"agents": [{"name": "a", "capability_tags": [""]}]}, "agents[a].capability_tags.0", ""),
        ({"agents": [{"name": 7}]}, "agents[0].name", 7),
    ],
)
def test_malformed_config_is_refused_with_the_path(data: object, field: str, value: object) -> None:
    """A malformed config raises InvalidInput whose field is the path to the bad value."""
    with pytest.raises(InvalidInput) as caught:
        parse_agents(data)
    assert caught.value.field == field
    assert caught.value.value == value
    assert repr(value) in str(caught.value)
