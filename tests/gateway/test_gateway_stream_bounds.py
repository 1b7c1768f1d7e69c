"""Hostile and old upstream streams through a served gateway (``provider.py``'s
``stream...`` behaviours, in their own process): a line without end, whitespace without
end before the first event, valid events without end and a drip of one event a second
each end at their agent's bound, as the agent's failure with its reason, while the server
keeps answering; the provider is asked for its usage and its usage chunk reaches only a
caller that asked; an upstream that refuses ``stream_options`` is asked again without it;
a tool call and a request's ``tools`` are charged by their size."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.provider import COMPLETION_TOKENS, PROMPT_TOKENS, Providers
from tests.served import Server, seed_scores, start_server

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls matter?"}]
LINE_BYTES = 262_144
STREAM_BYTES = 4_194_304
STREAM_S = 4
AGENTS = {  # name: (provider behaviour, tags, extra backend settings)
    "good": ("good:good", "[fits]", ""),
    "spaces": ("streamspace:spaces", "[fits]", ""),
    "linedrip": ("streamline:linedrip", "[]", f", max_line_bytes: {LINE_BYTES}"),
    "endless": ("streamendless:endless", "[]", f", max_stream_bytes: {STREAM_BYTES}"),
    "drip": ("streamdrip:drip", "[]", f", max_stream_s: {STREAM_S}, timeout_s: 30"),
    "oldserver": ("streamoptions:oldserver", "[]", ""),
    "toolcall": ("streamtool:toolcall", "[]", ""),
}
SCORES = {"spaces": 9.5, "good": 8.0}
"""At ``audit``: ``fits`` tries spaces, then good."""


def _config(base_url: str) -> str:
    agents = "".join(
        f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    capability_tags: {tags}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}"{extra}}}"""
        for name, (model, tags, extra) in AGENTS.items()
    )
    return f"""
gateway:
  max_attempts: 3
  models:
    fits: {{task_type: audit, tags: [fits]}}
agents:{agents}
"""


@pytest.fixture(scope="module")
def gateway(providers: Providers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`agentladder serve` (no tokens: loopback is admin), spaces ranked above good."""
    server = start_server(tmp_path_factory.mktemp("streambounds"), _config(providers.base_url))
    try:
        seed_scores(server, SCORES)
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(gateway: Server) -> Iterator[openai.OpenAI]:
    """OpenAI's client on the gateway, without retries of its own."""
    made = openai.OpenAI(base_url=gateway.url("/v1"), api_key="local", max_retries=0, timeout=60)
    try:
        yield made
    finally:
        made.close()


def _metric(server: Server, name: str, **labels: str) -> float:
    """The value of one sample of ``/metrics`` (0 when it is not there)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in httpx.get(server.url("/metrics")).text.splitlines():
        if line.startswith(f"{name}{{{wanted}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _health(server: Server, agent: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(server.url(f"/agents/{agent}")).json()["health"]
    return found


@dataclass
class Read:
    """What a caller read of one stream."""

    agent: str
    started: threading.Event = field(default_factory=threading.Event)
    received: int = 0
    body: bytearray = field(default_factory=bytearray)
    failure: str = ""

    def run(self, base: str) -> None:
        """Read the whole stream (at most 64 MiB), keeping its last 4 KiB."""
        body = {"model": self.agent, "messages": ASK, "stream": True}
        try:
            with httpx.stream(
                "POST", f"{base}/v1/chat/completions", json=body, timeout=60
            ) as answer:
                for chunk in answer.iter_bytes():
                    self.started.set()
                    self.received += len(chunk)
                    self.body = (self.body + chunk)[-4096:]
                    if self.received > 64 * 1024 * 1024:
                        break
        except httpx.HTTPError as error:
            self.failure = repr(error)
        finally:
            self.started.set()

    def last_error(self) -> str:
        """The message of the error event that ended the stream."""
        last = bytes(self.body).rstrip().rsplit(b"\n", 1)[-1]
        assert last.startswith(b"data: "), bytes(self.body)[-300:]
        message: str = json.loads(last[6:])["error"]["message"]
        return message


@dataclass
class Hostile:
    """Three hostile streams read at once, and ``/healthz`` asked meanwhile."""

    reads: dict[str, Read]
    probes: list[int]


@pytest.fixture(scope="module")
def hostile(gateway: Server) -> Hostile:
    """A line without end, events without end and a drip, read at once; ``/healthz``
    probed (at most 200 times) once all three started and while any runs."""
    reads = {agent: Read(agent) for agent in ("linedrip", "endless", "drip")}
    threads = [threading.Thread(target=r.run, args=(gateway.base,)) for r in reads.values()]
    for thread in threads:
        thread.start()
    for read in reads.values():
        assert read.started.wait(60)
    probes = []
    for _ in range(200):
        probes.append(httpx.get(gateway.url("/healthz"), timeout=30).status_code)
        if not any(thread.is_alive() for thread in threads):
            break
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive()
    return Hostile(reads, probes)


def test_healthz_answers_while_three_hostile_streams_run(hostile: Hostile) -> None:
    """``/healthz`` was answered 200 every time it was asked while the streams ran."""
    assert hostile.probes
    assert set(hostile.probes) == {200}


@pytest.mark.parametrize(
    ("agent", "reason", "most"),
    [
        ("linedrip", f"a line of the stream passed max_line_bytes ({LINE_BYTES} bytes): cut",
         4096),
        ("endless", f"the stream passed max_stream_bytes ({STREAM_BYTES} bytes): cut",
         STREAM_BYTES),
        ("drip", f"the stream ran past max_stream_s ({float(STREAM_S)} s): cut", 4096),
    ],
)  # fmt: skip
def test_a_hostile_stream_ends_at_its_bound_with_the_error_event(
    hostile: Hostile, agent: str, reason: str, most: int
) -> None:
    """Each stream ended with the gateway's error event naming the bound and its value,
    having passed the caller at most its bound's bytes (the unended line: none of it,
    it is held until its end; the drip: a few events)."""
    read = hostile.reads[agent]
    assert read.failure == ""
    assert read.last_error() == f"the agent's stream broke: limit: {reason}"
    assert read.received <= most + 1024


@pytest.mark.parametrize("agent", ["linedrip", "endless", "drip"])
def test_a_cut_stream_is_the_agents_failure_in_health_and_metrics(
    gateway: Server, hostile: Hostile, agent: str
) -> None:
    """The cut is the agent's failure: its health's last error names the bound, /metrics
    counts a ``limit`` error and a ``broken`` request, not an answered one."""
    assert hostile.reads[agent].failure == ""
    health = _health(gateway, agent)
    assert health["failed"] == 1
    assert "limit: " in str(health["last_error"])
    errors = _metric(gateway, "agentladder_provider_call_errors_total", agent=agent,
                     call="chat", kind="limit")  # fmt: skip
    assert errors == 1
    labels = {"agent": agent, "task_type": "general"}
    assert _metric(gateway, "agentladder_gateway_requests_total", **labels, outcome="broken") == 1
    assert _metric(gateway, "agentladder_gateway_requests_total", **labels, outcome="answered") == 0


def test_whitespace_without_end_before_the_first_event_falls_over_to_the_next_agent(
    gateway: Server, client: openai.OpenAI
) -> None:
    """``fits`` asks spaces first: megabytes of whitespace, no event; past
    ``max_start_bytes`` it is spaces' failure before any byte went out, and good answers.
    Named directly, spaces is a 503 giving the reason."""
    chunks = client.chat.completions.with_raw_response.create(
        model="fits", messages=ASK, stream=True
    )
    assert chunks.headers["x-agentladder-agent"] == "good"
    text = "".join(c.delta.content or "" for chunk in chunks.parse() for c in chunk.choices)
    assert text == "answer from good"
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="spaces", messages=ASK, stream=True)
    reason = "spaces: limit: more than max_start_bytes (65536 bytes) before the stream's first"
    assert reason in str(failed.value.message)
    health = _health(gateway, "spaces")
    assert health["failed"] == 2
    assert "max_start_bytes" in str(health["last_error"])
    errors = _metric(gateway, "agentladder_provider_call_errors_total", agent="spaces",
                     call="chat", kind="limit")  # fmt: skip
    assert errors == 2


def test_the_provider_is_asked_for_usage_and_its_chunk_reaches_only_a_caller_that_asked(
    gateway: Server, providers: Providers, client: openai.OpenAI
) -> None:
    """Every stream asks the provider for ``include_usage``, the caller's other
    ``stream_options`` kept; the usage-only chunk is taken out for a caller that did not
    ask and kept for one that did; both are charged the provider's usage."""
    tokens = {"agent": "good", "direction": "output"}
    spent = _metric(gateway, "agentladder_provider_tokens_total", **tokens)
    without = list(client.chat.completions.create(model="good", messages=ASK, stream=True))
    assert [c.usage for c in without] == [None] * len(without)
    assert all(c.choices for c in without)
    assert "".join(c.choices[0].delta.content or "" for c in without) == "answer from good"
    assert providers.seen()[-1]["stream_options"] == {"include_usage": True}
    asked = list(
        client.chat.completions.create(
            model="good", messages=ASK, stream=True, stream_options={"include_usage": True}
        )
    )
    usage = asked[-1].usage
    assert usage is not None
    assert asked[-1].choices == []
    assert (usage.prompt_tokens, usage.completion_tokens) == (PROMPT_TOKENS, COMPLETION_TOKENS)
    assert providers.seen()[-1]["stream_options"] == {"include_usage": True}
    options = {"include_usage": False, "continuous_usage_stats": True}
    raw = httpx.post(gateway.url("/v1/chat/completions"), timeout=30, json={
        "model": "good", "messages": ASK, "stream": True, "stream_options": options,
    })  # fmt: skip
    assert raw.status_code == 200
    assert b'"choices": []' not in raw.content
    assert b'"usage"' not in raw.content
    assert raw.text.rstrip().endswith("data: [DONE]")
    assert providers.seen()[-1]["stream_options"] == {**options, "include_usage": True}
    charged = _metric(gateway, "agentladder_provider_tokens_total", **tokens) - spent
    assert charged == 3 * COMPLETION_TOKENS


def test_an_upstream_that_refuses_stream_options_is_asked_again_without_and_remembered(
    gateway: Server, providers: Providers, client: openai.OpenAI
) -> None:
    """oldserver answers 400 naming ``stream_options``: asked once more without it, it
    answers; the next stream is sent without it at once; no failure is counted."""
    before = len(providers.seen())
    for _ in range(2):
        chunks = list(client.chat.completions.create(model="oldserver", messages=ASK, stream=True))
        text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
        assert text == "answer from oldserver"
    seen = [s["stream_options"] for s in providers.seen()[before:]]
    assert seen == [{"include_usage": True}, None, None]
    health = _health(gateway, "oldserver")
    assert (health["calls"], health["failed"]) == (2, 0)
    refusals = _metric(gateway, "agentladder_provider_call_errors_total", agent="oldserver",
                       call="chat", kind="rejected")  # fmt: skip
    assert refusals == 0


def test_a_tool_call_and_the_requests_tools_are_charged_by_their_size(gateway: Server) -> None:
    """A stream without usage answering a 200,000-character tool call, asked with 400 KB
    of ``tools``: charged about 50,000 output and 100,000 input tokens, not about 0."""
    tools = [{"type": "function", "function": {"name": "save", "description": "d" * 400_000}}]
    answer = httpx.post(gateway.url("/v1/chat/completions"), timeout=30, json={
        "model": "toolcall", "messages": ASK, "stream": True, "tools": tools,
    })  # fmt: skip
    assert answer.status_code == 200
    assert '"arguments": "aaaa' in answer.text
    labels = {"agent": "toolcall"}
    given = _metric(gateway, "agentladder_provider_tokens_total", **labels, direction="input")
    made = _metric(gateway, "agentladder_provider_tokens_total", **labels, direction="output")
    assert 100_000 <= given <= 100_100
    assert made == (200_000 + len("save")) // 4


def test_the_served_log_has_no_traceback(gateway: Server) -> None:
    """Whatever the hostile providers did (every test above ran on this server), the
    server logged no traceback."""
    log = gateway.log.read_text(encoding="utf-8")
    assert "POST /v1/chat/completions" in log
    assert "Traceback" not in log
