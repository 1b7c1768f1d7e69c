"""Before serving: can every configured agent be asked? (``agentladder config check``,
``--probe``, and ``serve``'s start).

- ``missing_key``: an OpenAI-compatible agent whose API key variable (``api_key_env``) is
  not set or empty cannot make a single call: ``serve`` logs it and marks it down from the
  start; ``config check`` warns; ``config check --probe`` fails it.
- ``probe_agents``: one tiny request to each agent's endpoint (``OpenAIProvider.probe``,
  ``max_tokens`` 1, within the agent's own ``timeout_s``), all at once: ok with the time
  it took, or what failed. A simulated agent answers in process; a remote agent (its own
  process) is not probed from here. ``gateway.judge`` with its own ``backend`` is probed
  too (line ``gateway.judge (name)``); a judge or a classifier (``gateway.classify.agent``)
  that is an agent of the config is probed as that agent, its line naming the role.
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


def _missing(backend: OpenAISettings, environ: Mapping[str, str]) -> str | None:
    if backend.api_key_env is None or environ.get(backend.api_key_env):
        return None
    return f"its API key variable {backend.api_key_env} is not set"


def missing_key(agent: AgentSettings, environ: Mapping[str, str] = os.environ) -> str | None:
    """Why ``agent`` cannot be asked for want of its API key, or None."""
    backend = agent.backend
    if not isinstance(backend, OpenAISettings) or agent.remote:
        return None
    return _missing(backend, environ)


def missing_keys(settings: Settings, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Every configured agent whose API key variable is missing, with why."""
    found = {agent.name: missing_key(agent, environ) for agent in settings.agents}
    return {name: why for name, why in found.items() if why is not None}


async def _ask(
    label: str, declared: AgentConfig, backend: OpenAISettings, environ: Mapping[str, str]
) -> Probe:
    """One tiny request to ``backend``'s endpoint, as ``label``."""
    why = _missing(backend, environ)
    if why is not None:
        return Probe(label, False, why)
    provider = OpenAIProvider(declared, backend, environ=environ)
    try:
        seconds = await provider.probe()
    except ProviderError as error:
        detail = str(error)
        if error.retry_after_s is not None:
            detail += f"; it asks to retry after {error.retry_after_s:g} s"
        return Probe(label, False, detail)
    finally:
        await provider.aclose()
    return Probe(label, True, f"{provider.shown_url} answered in {seconds * 1000:.0f} ms")


def _roles(settings: Settings) -> dict[str, list[str]]:
    """The gateway's roles of the configured agents: judge, classifier (by agent)."""
    found: dict[str, list[str]] = {}
    judge, classify = settings.gateway.judge, settings.gateway.classify
    if judge is not None and judge.agent is not None:
        found.setdefault(judge.agent, []).append("gateway.judge")
    if classify is not None and classify.agent is not None:
        found.setdefault(classify.agent, []).append("gateway.classify.agent")
    return found


async def _probe(agent: AgentSettings, environ: Mapping[str, str], roles: list[str]) -> Probe:
    backend = agent.backend
    if agent.remote or backend is None:
        return Probe(agent.name, True, "remote: runs as its own process; not probed from here")
    if not isinstance(backend, OpenAISettings):
        return Probe(agent.name, True, "simulated: answers in process")
    declared = AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))
    found = await _ask(agent.name, declared, backend, environ)
    if not roles:
        return found
    return Probe(found.agent, found.ok, f"{found.detail} (also {' and '.join(roles)})")


async def _probe_judge(settings: Settings, environ: Mapping[str, str]) -> Probe:
    """``gateway.judge`` with its own backend (not an agent), probed as an agent is."""
    judge = settings.gateway.judge
    assert judge is not None
    assert judge.backend is not None
    name = judge.name or judge.backend.model or "gateway-judge"
    declared = AgentConfig(name="gateway-judge", model_name=judge.backend.model or "")
    return await _ask(f"gateway.judge ({name})", declared, judge.backend, environ)


async def probe_agents(settings: Settings, environ: Mapping[str, str] = os.environ) -> list[Probe]:
    """Each configured agent probed, all at once, in the configuration's order; then
    ``gateway.judge`` when it has its own backend (a judge or classifier that is an agent
    is probed as that agent, its line saying its role)."""
    roles = _roles(settings)
    asked = [_probe(a, environ, roles.get(a.name, [])) for a in settings.agents]
    judge = settings.gateway.judge
    if judge is not None and judge.backend is not None:
        asked.append(_probe_judge(settings, environ))
    return list(await asyncio.gather(*asked))
