"""How to reach an agent's model: the ``backend:`` block of an agent in the config YAML.

agents:
  - name: audit_expert
    provider_id: openai
    model_name: gpt-4o
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0
    backend:
      kind: openai
      base_url: https://api.openai.com/v1
      api_key_env: OPENAI_API_KEY
      timeout_s: 60
      max_tokens: 1024
      max_response_bytes: 4194304   # the most of an answer read (decoded)
      max_line_bytes: 1048576       # through the gateway, a stream's longest line
      max_start_bytes: 65536        # ... the most before its first event
      max_stream_bytes: 67108864    # ... the most of the whole stream
      max_stream_s: 1800            # ... the longest it may run
  - name: sim_a
    backend: {kind: simulated, quality: 7.5, noise: 0.5, latency_ms: 20, seed: 1}
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BackendSettings", "OpenAISettings", "SimulatedSettings"]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class OpenAISettings(BaseModel):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LiteLLM...)."""

    model_config = _FROZEN

    kind: Literal["openai"] = "openai"
    base_url: str = Field(pattern=r"^https?://", description="up to and including /v1")
    model: str | None = Field(default=None, description="defaults to the agent's model_name")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout_s: float = Field(default=60.0, gt=0)
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float = Field(default=0.2, ge=0, le=2)
    max_response_bytes: int = Field(
        default=4 * 1024 * 1024, ge=1024, description="a longer answer is a failed call"
    )
    # A stream relayed by the gateway (docs/gateway.md, "Bounded streams"): past a bound
    # it is cut, the agent's failure. A line holds one chunk: 1 MiB is 250,000 tokens of
    # text, more than any model emits in one answer. Before the first event only comments
    # and blank lines come (a keep-alive a second is under 2 KB a minute). 128,000 tokens
    # (today's longest answers) stream as about 32 MB of chunk events, and at a slow
    # reasoning model's 40 tokens a second 64,000 take 27 minutes.
    max_line_bytes: int = Field(
        default=1024 * 1024, ge=1024, description="a longer line of a stream cuts it"
    )
    max_start_bytes: int = Field(
        default=64 * 1024, ge=1024, description="more before a stream's first event fails it"
    )
    max_stream_bytes: int = Field(
        default=64 * 1024 * 1024, ge=1024, description="a longer stream is cut"
    )
    max_stream_s: float = Field(default=1800.0, gt=0, description="a stream running longer is cut")


class SimulatedSettings(BaseModel):
    """A deterministic simulated agent: its proposals are as good as ``quality``."""

    model_config = _FROZEN

    kind: Literal["simulated"] = "simulated"
    quality: float = Field(default=5.0, ge=0, le=10)
    noise: float = Field(default=0.0, ge=0, le=10, description="evaluator's score noise (sd)")
    latency_ms: float = Field(default=0.0, ge=0)
    failure_rate: float = Field(default=0.0, ge=0, le=1)
    seed: int = 0


BackendSettings = Annotated[OpenAISettings | SimulatedSettings, Field(discriminator="kind")]
