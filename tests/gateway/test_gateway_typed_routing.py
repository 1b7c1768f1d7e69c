"""One agent per request, floors a team can name, and requests typed by the classifier, as
OpenAI's own client sees them: `agentladder serve` with ``max_attempts: 1`` and
``gateway.classify`` in front of the local providers (``classifying.py``)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from agentladder.domain.routing import RoutingRules
from tests.gateway.classifying import KEYS, PRICES, TEAM_B, config, seed
from tests.gateway.conftest import CLIENT, ORCH
from tests.gateway.provider import COMPLETION_TOKENS, PROMPT_TOKENS, Providers
from tests.served import Server, start_server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, providers: Providers) -> Iterator[Server]:
    """The server for the module, its judgments posted; stopped by its pid at the end."""
    with pytest.MonkeyPatch.context() as patch:
        for name, key in KEYS.items():
            patch.setenv(f"GW_KEY_{name.upper()}", key)
        server = start_server(tmp_path_factory.mktemp("typed"), config(providers.base_url))
        try:
            seed(server)
            yield server
        finally:
            server.stop()
    assert "GW_KEY_SORTER" not in os.environ


@pytest.fixture
def client(served: Server) -> Iterator[openai.OpenAI]:
    """OpenAI's client on the gateway, without retries of its own."""
    with openai.OpenAI(
        base_url=served.url("/v1"), api_key=CLIENT, max_retries=0, timeout=30
    ) as made:
        yield made


def ask(text: str) -> list[ChatCompletionMessageParam]:
    return [{"role": "user", "content": text}]


def metric(server: Server, name: str, **labels: str) -> float:
    """A /metrics sample by name and labels (in any order), 0 when absent."""
    for line in httpx.get(server.url("/metrics"), timeout=10).text.splitlines():
        head, _, value = line.rpartition(" ")
        found, _, rest = head.partition("{")
        pairs = dict(p.split("=", 1) for p in rest.rstrip("}").split(",") if p)
        if found == name and pairs == {k: f'"{v}"' for k, v in labels.items()}:
            return float(value)
    return 0.0


def cost(agent: str) -> float:
    """One answer of the local providers (11 prompt, 7 completion tokens) at the agent's
    prices."""
    price_in, price_out = PRICES[agent]
    return (PROMPT_TOKENS * price_in + COMPLETION_TOKENS * price_out) / 1_000_000


def routed(client: openai.OpenAI, model: str, text: str, **headers: str) -> tuple[str, Any]:
    """The agent that answered ``text`` asked of ``model``, and the answer's headers."""
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=ask(text), extra_headers=headers
    )
    content = raw.parse().choices[0].message.content
    assert content == f"answer from {raw.headers['x-agentladder-agent']}"
    return raw.headers["x-agentladder-agent"], raw.headers


def test_one_attempt_is_one_agent_without_fallback(
    served: Server, client: openai.OpenAI, providers: Providers
) -> None:
    """``max_attempts: 1``: the routing names one agent and no other is asked. At ops the
    best (broken) answers 500: the request is 503 naming it alone, one call sent; at code
    the best (thrifty) answers, one call sent."""
    before = len(providers.seen())
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="route:ops", messages=ask("restart the fleet"))
    assert isinstance(failed.value.body, dict)
    assert "(1 tried): broken: http: answered 500" in failed.value.body["message"]
    assert [s["model"] for s in providers.seen()[before:]] == ["fail:broken"]
    assert failed.value.response.headers["x-agentladder-task-type"] == "ops"
    assert failed.value.response.headers["x-agentladder-strategy"] == "best"
    before = len(providers.seen())
    agent, headers = routed(client, "route:code", "write a parser")
    assert agent == "thrifty"
    assert [s["model"] for s in providers.seen()[before:]] == ["good:thrifty"]
    assert (headers["x-agentladder-task-type"], headers["x-agentladder-strategy"]) == (
        "code", "best",
    )  # fmt: skip
    assert "x-agentladder-classified" not in headers


def test_cheapest_above_at_95_percent_picks_the_cheaper_agent_that_clears_it(
    served: Server, client: openai.OpenAI
) -> None:
    """At writing pricey is best (9.5 judged) and thrifty (9.4) a tenth of its price:
    ``cheapest_above@0.95`` asks thrifty, its floor 95% of pricey's skill (the reference)
    as ``POST /route`` computes it, said in the headers; best asks pricey, and so does
    ``@0.99`` (thrifty is not shown to clear 99% of it); the share header on
    ``route:writing`` is the same as the model's ``@0.95``."""
    spec = {"count": 1, "task_type": "writing", "strategy": "cheapest_above",
            "quality_floor_share": 0.95}  # fmt: skip
    bearer = {"Authorization": f"Bearer {ORCH}"}
    decided = httpx.post(served.url("/route"), json=spec, headers=bearer, timeout=30).json()
    assert decided["reference"]["agent_id"] == "pricey"
    floor = decided["quality_floor"]
    assert floor == pytest.approx(0.95 * decided["reference"]["skill"], abs=1e-6)
    assert decided["agents"][0]["agent_id"] == "thrifty"
    agent, headers = routed(client, "route:writing:cheapest_above@0.95", "a haiku")
    assert agent == "thrifty"
    assert headers["x-agentladder-task-type"] == "writing"
    assert headers["x-agentladder-strategy"] == "cheapest_above"
    assert float(headers["x-agentladder-quality-floor"]) == pytest.approx(floor, rel=1e-5)
    assert headers["x-agentladder-quality-floor-share"] == "0.95"
    assert headers["x-agentladder-confidence"] == f"{RoutingRules().confidence:g}"
    assert routed(client, "route:writing", "a haiku")[0] == "pricey"
    assert routed(client, "route:writing:cheapest_above@0.99", "a haiku")[0] == "pricey"
    by_header = routed(
        client, "route:writing", "a haiku", **{"x-agentladder-quality-floor-share": "0.95"}
    )
    assert by_header[0] == "thrifty"
    assert by_header[1]["x-agentladder-strategy"] == "cheapest_above"


def test_a_rule_types_the_request_without_asking_the_classifier(
    served: Server, client: openai.OpenAI, providers: Providers
) -> None:
    """``route`` with a traceback in the last user message: the rule's task type (code:
    thrifty answers), said ``rule``; the classifier agent is not asked; a stream carries
    the same headers."""
    before = len(providers.seen())
    agent, headers = routed(client, "route", "this Traceback puzzles me")
    assert agent == "thrifty"
    assert headers["x-agentladder-task-type"] == "code"
    assert headers["x-agentladder-classified"] == "rule"
    assert "x-agentladder-classifier-cost" not in headers
    assert all(not s["model"].startswith("parrot") for s in providers.seen()[before:])
    assert metric(served, "agentladder_gateway_classifications_total",
                  outcome="rule", task_type="code") >= 1  # fmt: skip
    streamed = httpx.post(
        served.url("/v1/chat/completions"), headers={"Authorization": f"Bearer {CLIENT}"},
        json={"model": "route", "messages": ask("which controls matter?"), "stream": True},
        timeout=30,
    )  # fmt: skip
    assert streamed.status_code == 200
    assert streamed.headers["x-agentladder-agent"] == "cheapo"  # audit's best
    assert streamed.headers["x-agentladder-classified"] == "rule"
    assert streamed.headers["x-agentladder-task-type"] == "audit"


def test_the_classifier_agent_names_the_type_its_call_counted_and_charged(
    served: Server, client: openai.OpenAI, providers: Providers
) -> None:
    """No rule matches: the sorter is asked and answers audit (cheapo, audit's best,
    answers), said ``agent``, its cost in the header; counted as a classification, as a
    ``classify`` call of the sorter with its cost, and charged to the client's spend (team-b,
    which nothing else charges) with the answer."""
    spent = {"client": "team-b", "period": "total"}
    calls_before = metric(served, "agentladder_provider_call_duration_seconds_count",
                          agent="sorter", call="classify")  # fmt: skip
    before = len(providers.seen())
    with openai.OpenAI(base_url=served.url("/v1"), api_key=TEAM_B, max_retries=0) as team_b:
        agent, headers = routed(team_b, "route", "ANSWER=audit please")
    assert agent == "cheapo"
    assert headers["x-agentladder-task-type"] == "audit"
    assert headers["x-agentladder-classified"] == "agent"
    assert headers["x-agentladder-classifier-cost"] == f"{cost('sorter'):.6f}"
    asked = providers.seen()[before:]
    assert [s["model"] for s in asked] == ["parrot:sorter", "good:cheapo"]
    assert "Task types: writing, code, audit, ops" in asked[0]["messages"][1]["content"]
    assert metric(served, "agentladder_gateway_classifications_total",
                  outcome="agent", task_type="audit") == 1  # fmt: skip
    assert metric(served, "agentladder_gateway_classifier_cost_dollars_total",
                  agent="sorter") == pytest.approx(cost("sorter"))  # fmt: skip
    assert metric(served, "agentladder_provider_call_duration_seconds_count",
                  agent="sorter", call="classify") == calls_before + 1  # fmt: skip
    want = cost("sorter") + cost("cheapo")
    for _ in range(50):  # the classifier's charge is written within a second
        if metric(served, "agentladder_gateway_client_spend_dollars", **spent) >= want - 1e-9:
            break
        time.sleep(0.1)
    assert metric(served, "agentladder_gateway_client_spend_dollars", **spent) == (
        pytest.approx(want, abs=1e-9)
    )


def test_a_classifier_that_fails_leaves_the_configured_default(
    served: Server, client: openai.OpenAI
) -> None:
    """The sorter answers 500, then a word that is no task type: each request goes to the
    default (writing: pricey answers), said ``default``; the failed calls are counted by
    kind; the garbage answer was paid for, the 500 was not."""
    for word, kind, paid in (("500", "http", 0.0), ("poetry", "invalid", cost("sorter"))):
        errors = {"agent": "sorter", "call": "classify", "kind": kind}
        failed_before = metric(served, "agentladder_provider_call_errors_total", **errors)
        agent, headers = routed(client, "route", f"ANSWER={word} please")
        assert agent == "pricey"
        assert headers["x-agentladder-task-type"] == "writing"
        assert headers["x-agentladder-classified"] == "default"
        assert headers["x-agentladder-classifier-cost"] == f"{paid:.6f}"
        after = metric(served, "agentladder_provider_call_errors_total", **errors)
        assert after == failed_before + 1
    assert metric(served, "agentladder_gateway_classifications_total",
                  outcome="default", task_type="writing") == 2  # fmt: skip


def test_a_floor_without_a_task_type_routes_at_the_classified_one(
    served: Server, client: openai.OpenAI
) -> None:
    """``route::cheapest_above@0.95``: the sorter says writing, thrifty answers as at
    ``route:writing:cheapest_above@0.95``; an error after the choice carries the headers
    too (ops: broken fails)."""
    agent, headers = routed(client, "route::cheapest_above@0.95", "ANSWER=writing")
    assert agent == "thrifty"
    assert (headers["x-agentladder-classified"], headers["x-agentladder-strategy"]) == (
        "agent", "cheapest_above",
    )  # fmt: skip
    with pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.create(model="route", messages=ask("ANSWER=ops"))
    assert failed.value.status_code == 503
    assert failed.value.response.headers["x-agentladder-task-type"] == "ops"
    assert failed.value.response.headers["x-agentladder-classified"] == "agent"


def test_route_is_listed_when_requests_are_classified(client: openai.OpenAI) -> None:
    """``GET /v1/models`` names ``route`` beside the agents."""
    ids = {model.id for model in client.models.list()}
    assert {"route", "pricey", "thrifty", "cheapo", "broken", "sorter"} <= ids
