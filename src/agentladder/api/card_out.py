"""The OpenAPI schema of ``GET /agents/{agent_id}/card`` and ``GET /.well-known/jwks.json``:
A2A v1.0's AgentCard as agentladder fills it (camelCase, as the protocol's JSON form
names its fields), the trust extension's params typed (docs/integrations.md). The route
answers the card ``domain/card.py`` assembles; these models document it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentCardOut", "JwksOut"]

_CLOSED = ConfigDict(extra="forbid", populate_by_name=True)


class SkillFigureOut(BaseModel):
    """A skill at a task type (null: overall), on the 0-10 scale, with its 95% interval."""

    model_config = _CLOSED

    task_type: str | None
    skill: float
    low: float
    high: float
    observations: int
    provisional: bool


class ProbationOut(BaseModel):
    """The last probation of one stream (a task type, or ``*``)."""

    model_config = _CLOSED

    stream: str
    cause: str
    since: int
    passes: int


class CardHealthOut(BaseModel):
    """ok, degraded or down, and why."""

    model_config = _CLOSED

    status: str
    reason: str


class TrustParamsOut(BaseModel):
    """The trust extension's params (``https://agentladder.dev/a2a/trust/v1``)."""

    model_config = _CLOSED

    issuer: str
    agent_id: str
    as_of: str | None = Field(description="the last fit, RFC 3339 UTC; null before the first")
    scale: str
    overall: SkillFigureOut | None
    skills: list[SkillFigureOut]
    level: str
    xp: int
    probation: list[ProbationOut]
    health: CardHealthOut
    signed: bool


class AgentExtensionOut(BaseModel):
    """An A2A AgentExtension: agentladder's trust extension."""

    model_config = _CLOSED

    uri: str
    description: str
    required: bool
    params: TrustParamsOut


class AgentCapabilitiesOut(BaseModel):
    """The card's capabilities: the trust extension."""

    model_config = _CLOSED

    extensions: list[AgentExtensionOut]


class AgentInterfaceOut(BaseModel):
    """Where the agent is known, and by which binding."""

    model_config = _CLOSED

    url: str
    protocol_binding: str = Field(alias="protocolBinding")
    protocol_version: str = Field(alias="protocolVersion")


class AgentSkillOut(BaseModel):
    """One declared capability tag as an A2A skill."""

    model_config = _CLOSED

    id: str
    name: str
    description: str
    tags: list[str]


class AgentCardSignatureOut(BaseModel):
    """A JWS of the card (detached payload)."""

    model_config = _CLOSED

    protected: str = Field(description="base64url of the protected header: alg, typ, kid, jku")
    signature: str = Field(description="base64url of the ES256 signature (r and s)")


class AgentCardOut(BaseModel):
    """An agent's A2A v1.0 AgentCard; ``signatures`` absent when the card is unsigned."""

    model_config = _CLOSED

    name: str
    description: str
    supported_interfaces: list[AgentInterfaceOut] = Field(alias="supportedInterfaces")
    version: str
    capabilities: AgentCapabilitiesOut
    default_input_modes: list[str] = Field(alias="defaultInputModes")
    default_output_modes: list[str] = Field(alias="defaultOutputModes")
    skills: list[AgentSkillOut]
    signatures: list[AgentCardSignatureOut] | None = None


class JwkOut(BaseModel):
    """The card signing key's public half (RFC 7517), ``kid`` its RFC 7638 thumbprint."""

    model_config = _CLOSED

    kty: str
    crv: str
    x: str
    y: str
    kid: str
    use: str
    alg: str


class JwksOut(BaseModel):
    """A JWK Set: the card signing key, or none."""

    model_config = _CLOSED

    keys: list[JwkOut]
