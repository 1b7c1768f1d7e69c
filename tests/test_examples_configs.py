"""The configurations in examples/ load with the config loader and name usable stores."""

from __future__ import annotations

import inspect
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agentladder.cli.commands import serve
from agentladder.cli.startup import check_store_url
from agentladder.config import load_settings
from agentladder.providers.settings import OpenAISettings

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_there_are_the_three_examples() -> None:
    """examples/ holds the simulated, the OpenAI-compatible and the two-instance NATS configs."""
    assert sorted(p.name for p in EXAMPLES.glob("*.yaml")) == [
        "nats-two-instances.yaml",
        "openai-compatible.yaml",
        "simulated.yaml",
    ]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_example_loads(path: Path) -> None:
    """Each example loads, has agents, and its store URL parses (without connecting)."""
    settings = load_settings(path)
    assert settings.agents
    check_store_url(settings.store)


def test_openai_example_takes_keys_from_the_environment() -> None:
    """The OpenAI-compatible example names key variables and local base_urls, no inline key."""
    settings = load_settings(EXAMPLES / "openai-compatible.yaml")
    backends = [a.backend for a in settings.agents]
    assert all(isinstance(b, OpenAISettings) for b in backends)
    openai = [b for b in backends if isinstance(b, OpenAISettings)]
    assert [b.api_key_env for b in openai if b.api_key_env] == ["OPENAI_API_KEY"]
    assert any(b.base_url.startswith("http://127.0.0.1") for b in openai)
    assert "sk-" not in (EXAMPLES / "openai-compatible.yaml").read_text(encoding="utf-8")


def test_nats_example_is_on_nats() -> None:
    """The two-instance example's store is a NATS URL."""
    assert load_settings(EXAMPLES / "nats-two-instances.yaml").store.startswith("nats://")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_no_example_puts_a_model_server_on_serves_default_port(path: Path) -> None:
    """No agent of an example calls a loopback endpoint on the port `agentladder serve`
    listens on by default: both could not run on one machine."""
    default = inspect.signature(serve).parameters["port"].default
    settings = load_settings(path)
    for agent in settings.agents:
        if isinstance(agent.backend, OpenAISettings):
            url = urlsplit(agent.backend.base_url)
            loopback = url.hostname in ("127.0.0.1", "localhost", "::1")
            assert not (loopback and url.port == default), (agent.name, agent.backend.base_url)
