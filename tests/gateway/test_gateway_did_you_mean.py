"""The gateway's unknown ``model`` as OpenAI's own client sees it: a typo offers the
closest name it may use (an agent, an alias, ``route:<task_type>``) in the 404's message;
an agent that exists but that the gateway cannot call says so and why; a route form at a
task type without evidence routes and warns (``x-agentladder-warning``); cheapest_above
without a floor is a 400 saying how to give one."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.gateway.conftest import CLIENT, KEYS, ORCH, config
from tests.gateway.provider import Providers
from tests.served import Server, seed_scores, start_server

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Which controls?"}]
OUTSIDER = "outsider-agent-token-0123456789"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, providers: Providers
) -> Iterator[tuple[Server, openai.OpenAI]]:
    """The gateway of ``conftest.py`` with judgments at ``audit``, an agent ``outsider``
    that heartbeats from elsewhere (no backend here) and ``imported1``, known by its
    judgments alone; and OpenAI's client on it (no retries)."""
    folder = tmp_path_factory.mktemp("did-you-mean")
    text = config(providers.base_url).replace(
        f"    - {{role: orchestrator, token: {ORCH}}}",
        f"    - {{role: orchestrator, token: {ORCH}}}\n"
        f"    - {{role: agent, token: {OUTSIDER}, agent_id: outsider}}",
    )
    assert OUTSIDER in text  # the tokens line it extends is there
    with pytest.MonkeyPatch.context() as patch:
        for name, key in KEYS.items():
            patch.setenv(f"GW_KEY_{name.upper()}", key)
        server = start_server(folder, text)
    made = openai.OpenAI(base_url=server.url("/v1"), api_key=CLIENT, max_retries=0, timeout=30)
    try:
        seed_scores(server, {"alpha": 8.0, "beta": 9.0}, ORCH)
        beat = httpx.post(
            server.url("/agents/heartbeat"), json={"name": "outsider"},
            headers={"Authorization": f"Bearer {OUTSIDER}"}, timeout=10,
        )  # fmt: skip
        assert beat.status_code == 200, beat.text
        judged = httpx.post(
            server.url("/oracle/judgments"),
            json={"agent_id": "imported1", "contract_id": "c-1", "score": 7, "new_agent": True},
            headers={"Authorization": f"Bearer {ORCH}"}, timeout=10,
        )  # fmt: skip
        assert judged.status_code == 200, judged.text
        yield server, made
    finally:
        made.close()
        server.stop()


def _not_found(client: openai.OpenAI, model: str) -> str:
    """The message of the 404 ``model_not_found`` the gateway answers ``model`` with."""
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(model=model, messages=ASK)
    error = raised.value.body
    assert isinstance(error, dict)
    assert (error["code"], error["param"]) == ("model_not_found", "model")
    message = str(error["message"])
    assert repr(model) in message
    return message


@pytest.mark.parametrize(
    ("model", "meant"),
    [("alpah", "alpha"), ("Alpha", "alpha"), ("smrat", "smart"), ("rout:audit", "route:audit")],
)
def test_a_typo_is_404_with_the_closest_name(
    served: tuple[Server, openai.OpenAI], model: str, meant: str
) -> None:
    """An agent, an alias, a route form at a task type with evidence: ``did you mean``."""
    message = _not_found(served[1], model)
    assert f"did you mean {meant}?" in message, message
    assert "GET /v1/models lists them" in message


def test_a_name_nothing_is_close_to_gets_no_suggestion(
    served: tuple[Server, openai.OpenAI],
) -> None:
    """``zzzz``: names no agent, route form or alias, and no ``did you mean``."""
    message = _not_found(served[1], "zzzz")
    assert "names no agent" in message
    assert "did you mean" not in message


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("sim", "is a configured agent this server does not call over an OpenAI-compatible"
                " backend (its backend is simulated)"),
        ("outsider", "is an agent that heartbeats from elsewhere, not one of this server's"
                     " configured agents"),
        ("imported1", "is an agent known by its evidence alone (imported or judged)"),
    ],
)  # fmt: skip
def test_an_agent_the_gateway_cannot_call_says_it_exists_and_why(
    served: tuple[Server, openai.OpenAI], model: str, says: str
) -> None:
    """A simulated agent, one heartbeating without a backend here, one imported: not "names
    no agent", but what it is and why the gateway cannot call it."""
    message = _not_found(served[1], model)
    assert says in message, message
    assert "names no agent" not in message


def test_a_route_form_at_a_task_type_without_evidence_routes_and_warns(
    served: tuple[Server, openai.OpenAI],
) -> None:
    """``route:aduit`` (judgments are at ``audit``): answered (alpha, the one agent with
    tag sql), with ``x-agentladder-warning`` offering audit; ``route:audit``: no warning."""
    client = served[1]
    raw = client.chat.completions.with_raw_response.create(
        model="route:aduit", messages=ASK, extra_headers={"x-agentladder-tags": "sql"}
    )
    assert raw.headers["x-agentladder-agent"] == "alpha"
    warning = raw.headers["x-agentladder-warning"]
    assert warning.startswith("no agent has evidence at task type 'aduit'")
    assert warning.endswith("did you mean audit?")
    known = client.chat.completions.with_raw_response.create(
        model="route:audit", messages=ASK, extra_headers={"x-agentladder-tags": "sql"}
    )
    assert "x-agentladder-warning" not in known.headers


def test_cheapest_above_without_a_floor_is_400_saying_how_to_give_it(
    served: tuple[Server, openai.OpenAI],
) -> None:
    """``route:audit:cheapest_above``: 400 invalid_value on model (not 404), naming
    ``@0.95`` and the floor headers."""
    with pytest.raises(openai.BadRequestError) as raised:
        served[1].chat.completions.create(model="route:audit:cheapest_above", messages=ASK)
    error = raised.value.body
    assert isinstance(error, dict)
    assert (error["code"], error["param"]) == ("invalid_value", "model")
    assert "cheapest_above needs a floor" in error["message"]
    assert "route:<task_type>:cheapest_above@0.95" in error["message"]
    assert "x-agentladder-quality-floor" in error["message"]
