"""The process's known secrets and where redaction is applied outside the rules: provider
errors, the exception tree, log records and the configuration's secret values."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from agentladder.config import parse_settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import AgentsFailed, ProviderError, Rejected
from agentladder.providers.openai import OpenAIProvider, endpoint
from agentladder.providers.preflight import probe_agents
from agentladder.providers.settings import OpenAISettings
from agentladder.redaction import current, redact_logs, remember, scrub
from agentladder.secret_values import known_secrets, url_secrets
from agentladder.services.agents.http import _reason
from tests.providers.chat_server import ChatServer, Reply

AGENT = AgentConfig(name="echoer", model_name="m")
KEY = "unshaped-agent-key-0001"
"""A key of no known shape: only knowing it as configured redacts it."""


def test_remembered_values_are_scrubbed_and_short_ones_ignored() -> None:
    """A remembered value is redacted from then on; None, empty and short values are not kept."""
    remember(["remembered-value-42", None, "", "abc"])
    assert scrub("echo remembered-value-42 abc") == "echo [redacted] abc"
    assert "abc" not in current().secrets


def test_provider_errors_and_gateway_failures_are_redacted() -> None:
    """ProviderError, Rejected's detail and AgentsFailed never hold a key shape."""
    leaked = "answered 401: Incorrect API key provided: sk-live-0123456789abcdefXYZ"
    error = ProviderError("http", leaked)
    assert "sk-live" not in str(error)
    assert "answered 401: Incorrect API key provided: [redacted]" in str(error)
    rejected = Rejected(400, leaked, {"message": leaked, "code": "bad"})
    assert "sk-live" not in str(rejected.detail["message"])
    failed = AgentsFailed("smart", [("a", "Bearer abcdefgh12345678")])
    assert "abcdefgh12345678" not in str(failed)


def test_log_records_are_redacted_message_and_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """Once installed, a log line and the traceback it carries lose every known secret."""
    redact_logs()
    redact_logs()  # once per process
    remember(["log-secret-0042"])
    log = logging.getLogger("agentladder.tests.redaction")
    with caplog.at_level(logging.INFO):
        log.warning("provider said %s", "key log-secret-0042 refused")
        try:
            raise RuntimeError("http://svc:log-secret-0042@h/v1 is down")
        except RuntimeError:
            log.exception("failed")
    assert "log-secret-0042" not in caplog.text
    assert "provider said key [redacted] refused" in caplog.text
    assert "RuntimeError: http://[redacted]@h/v1 is down" in caplog.text


def test_the_configurations_secret_values_are_found() -> None:
    """Agents' and the judge's key values, api.tokens values, URL passwords and key params."""
    settings = parse_settings({
        "store": "nats://app:nats-pass-1@127.0.0.1:4222",
        "api": {"tokens": [
            {"role": "admin", "token": "inline-admin-token-0123"},
            {"role": "client", "token_env": "T_ENV", "name": "team"},
        ]},
        "gateway": {"judge": {"backend": {"kind": "openai", "base_url": "https://j/v1",
                                          "model": "judge", "api_key_env": "J_KEY"}}},
        "agents": [{"name": "a1", "backend": {
            "kind": "openai", "base_url": "http://svc:b%40se-pass@h/v1?api_key=q-key-1&v=2",
            "api_key_env": "A_KEY"}}],
    })  # fmt: skip
    environ = {"A_KEY": "a-key-value", "J_KEY": "j-key-value", "T_ENV": "env-token-value-0123"}
    found = known_secrets(settings, environ)
    assert found >= {
        "a-key-value",
        "j-key-value",
        "inline-admin-token-0123",
        "env-token-value-0123",
        "nats-pass-1",
        "b%40se-pass",
        "b@se-pass",
        "q-key-1",
    }
    assert "2" not in found
    assert "svc" not in found
    assert "app" not in found
    assert list(url_secrets("https://tok-as-user@h/v1")) == ["tok-as-user", "tok-as-user"]


def _provider(url: str, key: str = KEY) -> OpenAIProvider:
    backend = OpenAISettings(base_url=url, api_key_env="ECHO_KEY", timeout_s=2.0)
    return OpenAIProvider(AGENT, backend, environ={"ECHO_KEY": key})


def test_a_401_echoing_the_key_and_a_url_password_leave_no_secret(
    chat_server: ChatServer,
) -> None:
    """The provider's error names the shown URL and the status, never the key or password."""
    body = f'{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}'
    chat_server.replies.append(Reply(body, status=401))
    url = chat_server.url.replace("http://", "http://svc:URLPASS-99@") + "?api_key=QUERYKEY7"
    provider = _provider(url)
    assert "URLPASS-99" not in provider.shown_url
    assert "QUERYKEY7" not in provider.shown_url

    async def call() -> ProviderError:
        try:
            with pytest.raises(ProviderError) as caught:
                await provider.probe()
            return caught.value
        finally:
            await provider.aclose()

    text = str(asyncio.run(call()))
    assert "answered 401" in text
    assert "Incorrect API key provided" in text
    for secret in (KEY, "URLPASS-99", "QUERYKEY7"):
        assert secret not in text


def test_config_check_probe_shows_no_secret(chat_server: ChatServer) -> None:
    """``config check --probe``'s lines (ok or failed) name the URL without its userinfo."""
    chat_server.replies.append(Reply('{"error": {"message": "no"}}', status=503))
    url = chat_server.url.replace("http://", "http://svc:PROBEPASS-1@")
    settings = parse_settings({"agents": [
        {"name": "p1", "backend": {"kind": "openai", "base_url": url}},
        {"name": "p2", "backend": {"kind": "openai", "base_url": url}},
    ]})  # fmt: skip
    probes = asyncio.run(probe_agents(settings, {}))
    assert sorted(p.ok for p in probes) == [False, True]
    assert all("PROBEPASS-1" not in p.detail and "svc:" not in p.detail for p in probes)
    assert any("answered in" in p.detail for p in probes)


def test_a_base_urls_query_stays_after_the_path() -> None:
    """``{base_url}/chat/completions`` keeps base_url's query after the path, not inside it."""
    url = "http://svc:pw@h:1/v1/?api-version=2024-06-01&api_key=k"
    assert endpoint(url) == "http://svc:pw@h:1/v1/chat/completions?api-version=2024-06-01&api_key=k"
    assert endpoint("https://api.openai.com/v1") == "https://api.openai.com/v1/chat/completions"


def test_an_agent_process_names_the_servers_url_without_its_secrets() -> None:
    """A failed exchange of an agent process with the server is logged without userinfo."""
    request = httpx.Request("GET", "http://agent:AGENTPASS-7@server:8000/agents/tasks/next?x=1")
    response = httpx.Response(503, request=request)
    error = httpx.HTTPStatusError("Server error '503' for url ...", request=request,
                                  response=response)  # fmt: skip
    assert _reason(error) == "503 from http://server:8000/agents/tasks/next"
    refused = httpx.ConnectError("http://agent:AGENTPASS-7@server:8000 refused")
    assert "AGENTPASS-7" not in _reason(refused)
