"""Before serving: can every configured agent be asked? (``agentladder config check``,
``--probe``, and ``serve``'s start).

- ``missing_key``: an OpenAI-compatible agent whose API key variable (``api_key_env``) is
  not set or empty cannot make a single call: ``serve`` logs it and marks it down from the
  start; ``config check`` warns; ``config check --probe`` fails it.
- ``probe_agents``: one tiny request to each agent's endpoint (``OpenAIProvider.probe``,
  ``max_tokens`` 1, within the agent's own ``timeout_s``), all at once: ok with the time
  it took, or what failed. A simulated agent answers in process; a remote agent (its own
  process) is not probed from here.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass

from agentladder.config import AgentSettings, Settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.providers.openai import OpenAIProvider
from agentladder.providers.settings import OpenAISettings

__all__ = ["Probe", "missing_key", "missing_keys", "probe_agents"]


@dataclass(frozen=True, slots=True)
class Probe:
    """One agent's probe: whether it answered, and what happened."""

    agent: str
    ok: bool
    detail: str


def missing_key(agent: AgentSettings, environ: Mapping[str, str] = os.environ) -> str | None:
    """Why ``agent`` cannot be asked for want of its API key, or None."""
    backend = agent.backend
    if not isinstance(backend, OpenAISettings) or agent.remote or backend.api_key_env is None:
        return None
    if environ.get(backend.api_key_env):
        return None
    return f"its API key variable {backend.api_key_env} is not set"


def missing_keys(settings: Settings, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Every configured agent whose API key variable is missing, with why."""
    found = {agent.name: missing_key(agent, environ) for agent in settings.agents}
    return {name: why for name, why in found.items() if why is not None}


async def _probe(agent: AgentSettings, environ: Mapping[str, str]) -> Probe:
    backend = agent.backend
    if agent.remote or backend is None:
        return Probe(agent.name, True, "remote: runs as its own process; not probed from here")
    if not isinstance(backend, OpenAISettings):
        return Probe(agent.name, True, "simulated: answers in process")
    why = missing_key(agent, environ)
    if why is not None:
        return Probe(agent.name, False, why)
    declared = AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))
    provider = OpenAIProvider(declared, backend, environ=environ)
    try:
        seconds = await provider.probe()
    except ProviderError as error:
        detail = str(error)
        if error.retry_after_s is not None:
            detail += f"; it asks to retry after {error.retry_after_s:g} s"
        return Probe(agent.name, False, detail)
    finally:
        await provider.aclose()
    return Probe(agent.name, True, f"{provider.shown_url} answered in {seconds * 1000:.0f} ms")


async def probe_agents(settings: Settings, environ: Mapping[str, str] = os.environ) -> list[Probe]:
    """Each configured agent probed, all at once, in the configuration's order."""
    return list(await asyncio.gather(*(_probe(a, environ) for a in settings.agents)))
