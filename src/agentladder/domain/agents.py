"""Agent configuration: names, declared capabilities and the estimated cost per round.

Rules (seed ``agent-ranking.md``, decisions in ``DESIGN.md``):

- The agent_id is the configured ``name``. A name is 1 to 64 characters from
  ``A-Z a-z 0-9 _ . -`` (``AGENT_NAME_PATTERN``), does not start or end with ``.`` and
  holds no ``..``: so ``.``, ``..`` and ``../x`` are refused, and every name is a valid
  NATS KV key and a single NATS subject token sequence without empty tokens.
- Every other field of an agent's config is optional; a missing or ``null`` field takes
  its default, and unknown keys are ignored so that older and newer configs keep working.
- ``estimated_cost_per_round = (4000 * input_price + 1500 * output_price) / 1_000_000``,
  prices in currency units per million tokens, never negative, NaN or infinite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    computed_field,
    model_validator,
)

from agentladder.domain.text import Visible
from agentladder.errors import InvalidInput

__all__ = [
    "AGENT_NAME_PATTERN",
    "INPUT_TOKENS_PER_ROUND",
    "MODEL_FIELD_MAX",
    "OUTPUT_TOKENS_PER_ROUND",
    "AgentConfig",
    "AgentName",
    "entry_path",
    "estimated_cost_per_round",
    "is_agent_name",
    "parse_agents",
    "round_cost",
    "validate_agent_name",
]

AGENT_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
INPUT_TOKENS_PER_ROUND = 4000
OUTPUT_TOKENS_PER_ROUND = 1500

_NAME_RE = re.compile(AGENT_NAME_PATTERN)


def validate_agent_name(value: str, field: str = "name") -> str:
    """Return ``value`` if it is a valid agent name, else raise ``InvalidInput``."""
    if not isinstance(value, str):
        raise InvalidInput(field, value, "must be a string")
    if _NAME_RE.fullmatch(value) is None:
        raise InvalidInput(field, value, "must be 1 to 64 characters from A-Z a-z 0-9 _ . -")
    if value.startswith(".") or value.endswith("."):
        raise InvalidInput(field, value, "must not start or end with '.'")
    if ".." in value:
        raise InvalidInput(field, value, "must not contain '..'")
    return value


def is_agent_name(value: object) -> bool:
    """Whether ``value`` is a valid agent name (``validate_agent_name`` would pass it)."""
    try:
        validate_agent_name(value, "name")  # type: ignore[arg-type]
    except InvalidInput:
        return False
    return True


def entry_path(index: int, entry: object) -> str:
    """Where an agent of the configuration is: ``agents[echo]`` by its name when the entry
    has a valid one (a path that survives reordering the list, and says which agent at a
    glance), else ``agents[3]`` by its place."""
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return f"agents[{name}]" if is_agent_name(name) else f"agents[{index}]"


def _check_price(field: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(field, value, "must be a number")
    if not math.isfinite(value) or value < 0:
        raise InvalidInput(field, value, "must be a finite number >= 0")
    return float(value)


def estimated_cost_per_round(input_price_per_mtok: float, output_price_per_mtok: float) -> float:
    """The estimated cost of one agent in one round: 4000 input and 1500 output tokens."""
    input_price = _check_price("input_price_per_mtok", input_price_per_mtok)
    output_price = _check_price("output_price_per_mtok", output_price_per_mtok)
    return round_cost(input_price, output_price)


def round_cost(input_price: float, output_price: float) -> float:
    """``estimated_cost_per_round`` of prices already checked (finite, >= 0)."""
    return (
        INPUT_TOKENS_PER_ROUND * input_price + OUTPUT_TOKENS_PER_ROUND * output_price
    ) / 1_000_000


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


AGENT_NAME_SCHEMA_PATTERN = r"^[A-Za-z0-9_-]([A-Za-z0-9_.-]{0,62}[A-Za-z0-9_-])?$"
"""The name rule as a JSON-schema pattern (all but the ban on '..', which the validator adds)."""

AgentName = Annotated[
    str,
    AfterValidator(validate_agent_name),
    WithJsonSchema({"type": "string", "pattern": AGENT_NAME_SCHEMA_PATTERN}),
]
_Tags = tuple[Annotated[str, AfterValidator(_not_blank), Visible], ...]
_Price = Annotated[float, Field(ge=0, allow_inf_nan=False)]
MODEL_FIELD_MAX = 128
"""The longest ``provider_id`` or ``model_name`` (the same bound as a judgment's)."""
_ModelField = Annotated[str, Field(max_length=MODEL_FIELD_MAX), Visible]


class AgentConfig(BaseModel):
    """One entry of the ``agents:`` list of the config YAML; only ``name`` is required."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: AgentName
    provider_id: _ModelField = ""
    model_name: _ModelField = ""
    description: str = ""
    capability_tags: _Tags = ()
    signing_schemes: _Tags = ()
    input_price_per_mtok: _Price = 0.0
    output_price_per_mtok: _Price = 0.0

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        """A key given as ``null`` (``description:`` with nothing after it) takes its default."""
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if v is not None or k == "name"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def estimated_cost_per_round(self) -> float:
        """The estimated cost of this agent per round, from its per-token prices."""
        return estimated_cost_per_round(self.input_price_per_mtok, self.output_price_per_mtok)


def _first_error(index: int, entry: object, error: ValidationError) -> InvalidInput:
    """Turn the first error of a pydantic ValidationError into an ``InvalidInput``, its
    path naming the agent (``entry_path``; by its place when the name is the error)."""
    detail = error.errors()[0]
    loc = ".".join(str(part) for part in detail["loc"])
    where = f"agents[{index}]" if loc == "name" else entry_path(index, entry)
    field = f"{where}.{loc}" if loc else where
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, InvalidInput):
        reason = cause.reason
    elif isinstance(cause, ValueError):
        reason = str(cause)
    else:
        reason = detail["msg"]
    return InvalidInput(field, detail.get("input"), reason)


def parse_agents(data: object) -> list[AgentConfig]:
    """The agents of a parsed config mapping (its ``agents`` list), names unique.

    A missing or empty ``agents`` key (or an empty document) means no configured agents.
    Errors are ``InvalidInput`` whose field is the path: ``agents[2].name`` for a name
    (by its place), ``agents[echo].input_price_per_mtok`` for another field (by its name).
    """
    if data is None:
        return []
    if not isinstance(data, Mapping):
        raise InvalidInput("config", data, "must be a mapping")
    entries = data.get("agents")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InvalidInput("agents", entries, "must be a list")
    agents: list[AgentConfig] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise InvalidInput(f"agents[{index}]", entry, "must be a mapping")
        try:
            agent = AgentConfig.model_validate(entry)
        except ValidationError as error:
            raise _first_error(index, entry, error) from error
        if agent.name in seen:
            reason = f"duplicates agents[{seen[agent.name]}].name"
            raise InvalidInput(f"agents[{index}].name", agent.name, reason)
        seen[agent.name] = index
        agents.append(agent)
    return agents
