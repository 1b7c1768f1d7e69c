"""The YAML configuration: agents, orchestrator, Oracle rule tables and the store.

Read only when asked (``load_settings(path)``), never at import. Every section is
optional; an empty file is a valid configuration with the specifications' defaults::

    store: sqlite:///agentladder.db
    agents:
      - name: audit_expert
        provider_id: openai
        model_name: gpt-4o
    orchestrator:
      rank_bucket: nsed_agent_ranks
    oracle:
      xp:
        task_completed: 10
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from agentladder.domain.agents import AgentConfig, AgentName, entry_path, parse_agents
from agentladder.domain.fair_shares import RoleTable, share_problems
from agentladder.domain.probation import SentinelSettings
from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.rules import OracleRules
from agentladder.domain.skill.rules import SkillRules
from agentladder.errors import InvalidInput
from agentladder.providers.settings import BackendSettings, OpenAISettings
from agentladder.services.card.keys import load_private_key
from agentladder.services.gateway.settings import Budget, GatewaySettings

__all__ = [
    "AgentSettings",
    "ApiSettings",
    "Nested",
    "OrchestratorSettings",
    "Settings",
    "TokenSettings",
    "check_judge",
    "check_shares",
    "config_error",
    "config_errors",
    "load_settings",
    "parse_settings",
    "store_beside",
    "yaml_problem",
]

DEFAULT_STORE = "sqlite:///agentladder.db"
_HOST = re.compile(r"\.?[A-Za-z0-9_-]{1,63}(\.[A-Za-z0-9_-]{1,63})*\.?")


def _ip_literal(entry: str) -> bool:
    try:
        ipaddress.ip_address(entry.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    return True


class Nested(ValueError):
    """A validator's refusal of a value inside the field it validates: ``loc`` is the
    path under that field (``(3, "name")`` in ``api.tokens``), so the error names
    ``api.tokens[3].name`` rather than the whole list."""

    def __init__(self, loc: tuple[int | str, ...], value: object, reason: str) -> None:
        super().__init__(reason)
        self.loc = loc
        self.value = value
        self.reason = reason


class OrchestratorSettings(BaseModel):
    """How deliberations run and where ranks live."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank_bucket: str = Field(default="nsed_agent_ranks", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    heartbeat_interval_s: float = Field(default=10.0, gt=0.0, allow_inf_nan=False)
    scope_rounds: dict[str, int] = Field(
        default_factory=lambda: {"quick": 1, "standard": 2, "deep": 3}
    )
    timeout_s: float = Field(
        default=60.0, gt=0.0, allow_inf_nan=False,
        description="one provider call's deadline, its retries and waits included",
    )  # fmt: skip
    max_retry_wait_s: float = Field(
        default=5.0, ge=0.0, allow_inf_nan=False,
        description="the longest a call waits for a provider's Retry-After before asking"
        " again; a longer one ends the call at once (not asked)",
    )  # fmt: skip
    deliberation_timeout_s: float | None = Field(
        default=None, gt=0.0, allow_inf_nan=False,
        description="the longest a whole deliberation may run; None: only each call's timeout",
    )  # fmt: skip
    max_running: int = Field(
        default=32, ge=1, le=10_000, description="deliberations run at once by this instance"
    )
    max_waiting: int = Field(
        default=1000, ge=0, le=1_000_000,
        description="accepted deliberations waiting for a free slot; more are refused (busy)",
    )  # fmt: skip
    max_settling: int = Field(
        default=1000, ge=1, le=1_000_000,
        description="deliberations whose side effects may be pending on this instance; while"
        " as many are, new deliberations and reports are refused (busy)",
    )  # fmt: skip
    recover_interval_s: float = Field(
        default=30.0, gt=0.0, allow_inf_nan=False,
        description="how often unfinished deliberations are looked for (deliberations/recovery.py)",
    )  # fmt: skip
    lease_s: float = Field(
        default=30.0, gt=0.0, allow_inf_nan=False,
        description="how long an instance's lease lasts unrenewed (services/lease.py)",
    )  # fmt: skip
    success_min_score: float | None = Field(
        default=None, ge=0.0, le=10.0, allow_inf_nan=False,
        description="a participant whose deliberation score is under this is judged failed; "
        "None: any score is a success",
    )  # fmt: skip
    # Mentors: the best outputs of expert agents per task type, shown to lower levels.
    mentor_examples: int = Field(default=0, ge=0, le=10, description="0: not shown")
    mentor_min_score: float = Field(default=8.0, ge=0.0, le=10.0)
    mentor_keep: int = Field(default=20, ge=1, le=1000)

    @field_validator("scope_rounds")
    @classmethod
    def _at_least_one_round(cls, value: dict[str, int]) -> dict[str, int]:
        for scope, rounds in value.items():
            if rounds < 1:
                raise ValueError(f"scope {scope!r} needs at least 1 round, not {rounds}")
        return value


class AgentSettings(AgentConfig):
    """A configured agent: its declaration plus how agentladder reaches its model.

    ``backend`` (openai or simulated) lets the server ask the agent itself; an agent with
    ``remote: true`` runs as its own process (``agentladder agent``) and heartbeats.
    """

    # Unlike a heartbeat's AgentConfig (unknown fields ignored), the YAML refuses them.
    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: BackendSettings | None = None
    remote: bool = False


class TokenSettings(BaseModel):
    """A bearer token and what it may do: ``admin``, ``orchestrator``, ``agent``,
    ``client`` (the gateway's ``/v1`` endpoints, docs/gateway.md) or ``metrics``
    (``GET /metrics`` only: once one is configured, ``/metrics`` needs it or an admin's).

    The token is given inline (``token``) or, better, named by an environment variable
    (``token_env``). An ``agent`` token acts for one agent only (``agent_id``). A
    ``client`` token needs a ``name``, its own: its feedback's judge and its spend are
    kept under it, so two clients sharing one would rate each other's answers and share
    a budget.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["admin", "orchestrator", "agent", "client", "metrics"]
    token: str | None = Field(default=None, min_length=16)
    token_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    agent_id: AgentName | None = None
    name: AgentName | None = Field(default=None, validate_default=True)
    budget: Budget | None = None
    max_in_flight: int | None = Field(
        default=None, ge=1, le=1_000_000,
        description="requests this token may have in flight; none: its role's (api.roles)",
    )  # fmt: skip
    rate_per_s: float | None = Field(
        default=None, gt=0.0, le=1_000_000.0, allow_inf_nan=False,
        description="requests a second this token may make; none: its role's (api.roles)",
    )  # fmt: skip
    burst: int | None = Field(
        default=None, ge=1, le=1_000_000,
        description="requests this token may make at once; none: its role's, or one second's"
        " worth of its own rate_per_s",
    )  # fmt: skip

    @field_validator("name")
    @classmethod
    def _client_named(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("role") == "client":
            raise ValueError(
                "is required for role client: a client's feedback and spend are kept under"
                " its own name (another client's token must have another one)"
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> TokenSettings:
        if (self.token is None) == (self.token_env is None):
            raise ValueError("give exactly one of token and token_env")
        if (self.role == "agent") != (self.agent_id is not None):
            raise ValueError("agent_id is required for, and only for, role agent")
        if self.budget is not None and self.role != "client":
            raise ValueError("budget is for role client only")
        return self


class ApiSettings(BaseModel):
    """The REST API: who may write. With no tokens, writes are accepted from loopback only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: tuple[TokenSettings, ...] = ()
    trusted_proxies: tuple[str, ...] = Field(
        default=(),
        description="Addresses or networks of the proxies whose X-Forwarded-For and"
        " X-Forwarded-Proto are believed (none by default: proxy headers are ignored);"
        " needs tokens.",
    )
    allowed_hosts: tuple[str, ...] = Field(
        default=(),
        description="Host names (or IP addresses) requests may name besides the loopback"
        " names and the listening address; '.example.com' for a domain and its subdomains,"
        " '*' for any (api.md, \"Allowed hosts\").",
    )
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_buffered_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        description="Bytes of request bodies being received by all requests together; the"
        " request past it is refused 503 busy.",
    )
    max_buffered_share_per_token: float = Field(
        default=0.5, gt=0.0, le=1.0,
        description="The share of max_buffered_bytes the bodies being received from one"
        " token may hold together (429 past it).",
    )  # fmt: skip
    roles: RoleTable = Field(
        default=RoleTable(),
        description="Each role's share of max_buffered_bytes, and its tokens' requests in"
        " flight and rate.",
    )
    body_timeout_s: float = Field(
        default=30.0, gt=0.0, le=3600.0, allow_inf_nan=False,
        description="How long a request's body may take to arrive after its headers (408).",
    )  # fmt: skip
    header_timeout_s: float = Field(
        default=10.0, gt=0.0, le=3600.0, allow_inf_nan=False,
        description="How long a request's line and headers may take to arrive, from the"
        " connection or the previous response (408).",
    )  # fmt: skip
    max_header_bytes: int = Field(
        default=16 * 1024, ge=1024, le=1024 * 1024,
        description="The size of a request's line and headers (431 past it).",
    )  # fmt: skip
    max_connections: int = Field(
        default=1000, ge=1, le=1_000_000,
        description="Connections held at once; the one past it is answered 503 and closed.",
    )  # fmt: skip
    keep_alive_s: float = Field(
        default=5.0, gt=0.0, le=3600.0, allow_inf_nan=False,
        description="How long an idle connection is kept open between requests.",
    )  # fmt: skip
    max_polls_per_agent: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description="Long polls of GET /agents/tasks/next one agent may hold at once (429"
        " past it); 64 is the most `agentladder agent --concurrency` runs.",
    )
    access_log: bool = Field(
        default=True,
        description="One line per request on the server's output (uvicorn's access log);"
        " off where a proxy in front logs the requests (about 7% of the event loop's time"
        " on small writes).",
    )
    shutdown_grace_s: int = Field(
        default=10,
        ge=1,
        le=3600,
        description="On SIGTERM, how long requests in flight may finish before they are"
        " cancelled (an agent's long poll, a client that stopped reading).",
    )
    card_signing_key: str | None = Field(
        default=None,
        min_length=1,
        description="The key that signs the agents' A2A cards (ES256): the path of a PEM EC"
        " P-256 private key, or env:NAME for an environment variable holding the PEM; none:"
        " the cards are served unsigned (docs/integrations.md).",
    )
    card_issuer: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Who the cards' trust extension names as its issuer (this server's name"
        " or public URL); none: the URL the card was asked at.",
    )

    @field_validator("tokens")
    @classmethod
    def _names_unique(cls, value: tuple[TokenSettings, ...]) -> tuple[TokenSettings, ...]:
        first: dict[str, int] = {}
        for index, token in enumerate(value):
            if token.name is None:
                continue
            if token.name in first:
                raise Nested(
                    (index, "name"), token.name,
                    f"duplicates api.tokens[{first[token.name]}].name: each token has its own name"
                    " (to rotate a token, change its value: the spend stays with the name)",
                )  # fmt: skip
            first[token.name] = index
        return value

    @field_validator("card_signing_key")
    @classmethod
    def _card_key(cls, value: str | None) -> str | None:
        if value is not None:
            load_private_key(value)
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if entry != "*" and not _HOST.fullmatch(entry) and not _ip_literal(entry):
                raise ValueError(
                    f"{entry!r} is not a host name, '.domain', an IP address or '*' (no scheme,"
                    " no port)"
                )
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network") from None
        return value


class Settings(BaseModel):
    """The whole configuration of one agentladder service."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    store: str = DEFAULT_STORE
    agents: tuple[AgentSettings, ...] = ()
    orchestrator: OrchestratorSettings = OrchestratorSettings()
    oracle: OracleRules = OracleRules()
    skill: SkillRules = SkillRules()
    routing: RoutingRules = RoutingRules()
    sentinel: SentinelSettings = SentinelSettings()
    api: ApiSettings = ApiSettings()
    gateway: GatewaySettings = GatewaySettings()

    def agent(self, name: str) -> AgentSettings | None:
        """The configured agent called ``name``, if any."""
        return next((a for a in self.agents if a.name == name), None)


def _path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """``agents[0].backend.kind`` from a pydantic error's location."""
    path = prefix
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the (nested) model at ``loc`` accepts; [] when ``loc`` leaves the models.

    A discriminated union (an agent's ``backend``) is followed by its tag in ``loc``.
    """
    candidates: list[type[BaseModel]] = [model]
    for part in loc:
        if isinstance(part, int):
            continue
        fields = [c.model_fields[part] for c in candidates if part in c.model_fields]
        if fields:
            candidates = _models_in(fields[0].annotation)
            continue
        tagged = [c for c in candidates if c.model_fields.get("kind", None) is not None]
        candidates = [c for c in tagged if c.model_fields["kind"].default == part]
        if not candidates:
            return []
    return list(candidates[0].model_fields) if len(candidates) == 1 else []


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models inside an annotation (``X | Y | None``, ``tuple[X, ...]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for argument in getattr(annotation, "__args__", ()) for m in _models_in(argument)]


def config_error(error: ValidationError, model: type[BaseModel], prefix: str = "") -> InvalidInput:
    """The first error of ``error`` as one ``InvalidInput`` naming its path in the YAML; an
    unknown key's reason offers the closest known key."""
    return config_errors(error, model, prefix)[0]


def config_errors(
    error: ValidationError, model: type[BaseModel], prefix: str = ""
) -> list[InvalidInput]:
    """Every error of ``error``, each as ``config_error`` tells the first
    (``agentladder config check`` lists them all)."""
    return [_detail_error(detail, model, prefix) for detail in error.errors()]


def _detail_error(detail: ErrorDetails, model: type[BaseModel], prefix: str) -> InvalidInput:
    loc = tuple(detail["loc"])
    field = _path(prefix, loc) or "config"
    if detail["type"] == "extra_forbidden":
        known = _known_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        reason = f"unknown key (did you mean {close[0]}?)" if close else "unknown key"
        return InvalidInput(field, detail.get("input"), reason)
    cause = detail.get("ctx", {}).get("error")
    if isinstance(cause, Nested):
        return InvalidInput(_path(prefix, loc + cause.loc), cause.value, cause.reason)
    reason = cause.reason if isinstance(cause, InvalidInput) else str(cause or detail["msg"])
    return InvalidInput(field, detail.get("input"), reason.removeprefix("Value error, "))


def parse_settings(data: object) -> Settings:
    """Settings from the parsed YAML document (``None`` for an empty file)."""
    if data is None:
        return Settings()
    if not isinstance(data, Mapping):
        raise InvalidInput("config", type(data).__name__, "must be a mapping of sections")
    values = dict(data)
    entries = values.pop("agents", None) or []
    parse_agents({"agents": entries})  # names valid and unique, errors naming the path
    agents = []
    for index, entry in enumerate(entries):
        try:
            agents.append(AgentSettings.model_validate(entry))
        except ValidationError as error:
            raise config_error(error, AgentSettings, entry_path(index, entry)) from None
    try:
        settings = Settings.model_validate({**values, "agents": agents})
    except ValidationError as error:
        raise config_error(error, Settings) from None
    buffered = settings.api.max_buffered_bytes
    if settings.gateway.max_body_bytes > buffered:
        raise InvalidInput(
            "gateway.max_body_bytes", settings.gateway.max_body_bytes,
            f"must be at most api.max_buffered_bytes ({buffered}): a body over it could never"
            " be received",
        )  # fmt: skip
    check_judge(settings)
    problems = check_shares(settings)
    if problems:
        raise problems[0]
    return settings


def check_shares(settings: Settings) -> list[InvalidInput]:
    """The fair shares' contradictions (``domain/fair_shares.py``), each naming its key."""
    api = settings.api
    return share_problems(
        api.max_buffered_bytes, api.max_buffered_share_per_token, api.roles, api.tokens,
        api.max_body_bytes, settings.gateway.max_body_bytes,
    )  # fmt: skip


def check_judge(settings: Settings) -> None:
    """``gateway.judge.agent`` and ``gateway.classify.agent`` name agents this server
    calls over an OpenAI-compatible backend (each is asked through it)."""
    judge, classify = settings.gateway.judge, settings.gateway.classify
    named = [
        ("gateway.judge.agent", None if judge is None else judge.agent),
        ("gateway.classify.agent", None if classify is None else classify.agent),
    ]
    for key, name in named:
        if name is None:
            continue
        found = settings.agent(name)
        if found is None or found.remote or not isinstance(found.backend, OpenAISettings):
            raise InvalidInput(
                key, name,
                "must name an agent of the config with an OpenAI-compatible backend (not"
                " remote)",
            )  # fmt: skip


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML syntax error on one line: where (line and column, from 1) and the problem
    (PyYAML's own message spans several lines, with the text quoted)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    if mark is None or not problem:
        return f"is not valid YAML: {' '.join(str(error).split())}"
    return f"is not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def load_settings(path: Path) -> Settings:
    """Settings from the YAML file at ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInput("config", str(path), f"cannot be read ({error.strerror})") from error
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InvalidInput("config", str(path), yaml_problem(error)) from error
    return store_beside(parse_settings(document), path.resolve().parent)


def store_beside(settings: Settings, folder: Path) -> Settings:
    """``settings`` with a relative ``sqlite:///`` store path made absolute against
    ``folder`` (the configuration file's): the file names the same database from any
    working directory. Other stores, absolute paths, ``:memory:`` and the default store
    (no ``store`` key: the working directory's ``agentladder.db``) are kept."""
    if "store" not in settings.model_fields_set:  # the default: the working directory's
        return settings
    parts = urlsplit(settings.store)
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    if parts.scheme != "sqlite" or parts.netloc or not path or path == ":memory:":
        return settings
    if Path(path).is_absolute():
        return settings
    query = f"?{parts.query}" if parts.query else ""
    return settings.model_copy(update={"store": f"sqlite:///{folder / path}{query}"})
