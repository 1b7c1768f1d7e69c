"""Who sees the gateway's clients, against a served gateway: with a ``metrics`` token
configured, ``/metrics`` needs it (or an admin's); the Traffic page shows each client's
name, budget and spend to an admin only, the clients summed to anyone else."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway.conftest import CLIENT
from tests.gateway.provider import Providers
from tests.served import Server, start_server

TEAM_A = "team-a-token-0123456789"
TEAM_B = "team-b-token-0123456789"
ADMIN = "admin-token-0123456789"
ORCH = "orchestrator-token-0123456789"
METRICS = "metrics-token-0123456789"
ASK = [{"role": "user", "content": "Which controls matter most?"}]
SPEND = 'agentladder_gateway_client_spend_dollars{client="team-a",period="day"}'


def config(base_url: str) -> str:
    """Two clients, an admin, an orchestrator and a metrics token read from a variable."""
    return f"""
api:
  tokens:
    - {{role: client, token: {TEAM_A}, name: team-a, budget: {{limit_usd: 5, period: day}}}}
    - {{role: client, token: {TEAM_B}, name: team-b}}
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: metrics, token_env: SMALL_METRICS_TOKEN, name: prometheus}}
agents:
  - name: alpha
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: "good:alpha",
               api_key_env: GW_KEY_ALPHA}}
"""


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory, providers: Providers) -> Iterator[Server]:
    """`agentladder serve` with a metrics token; team-a and team-b each had one answer.
    One for the module: its tests only read, and are refused what would change a count."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
        monkeypatch.setenv("SMALL_METRICS_TOKEN", METRICS)
        yield from _locked(tmp_path_factory.mktemp("locked"), providers)


def _locked(folder: Path, providers: Providers) -> Iterator[Server]:
    server = start_server(folder, config(providers.base_url))
    try:
        for token in (TEAM_A, TEAM_B):
            answer = httpx.post(
                server.url("/v1/chat/completions"), json={"model": "alpha", "messages": ASK},
                headers={"Authorization": f"Bearer {token}"}, timeout=30,
            )  # fmt: skip
            assert answer.status_code == 200, answer.text
        yield server
    finally:
        server.stop()


def _get(server: Server, path: str, token: str | None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.get(server.url(path), headers=headers, timeout=10)


def test_metrics_need_a_metrics_or_admin_token_once_one_is_configured(locked: Server) -> None:
    """No token: 401 with a Bearer challenge; an unknown token 401; a client's or an
    orchestrator's 403; the metrics token (from its variable) and an admin's: 200 with
    the clients' spend."""
    anonymous = _get(locked, "/metrics", None)
    assert anonymous.status_code == 401, anonymous.text
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert "team-a" not in anonymous.text
    assert _get(locked, "/metrics", "unknown-token-0123456789").status_code == 401
    for other in (TEAM_A, ORCH):
        refused = _get(locked, "/metrics", other)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "forbidden"
    for reader in (METRICS, ADMIN):
        shown = _get(locked, "/metrics", reader)
        assert shown.status_code == 200, shown.text
        assert SPEND in shown.text


def test_a_metrics_token_may_do_nothing_else(locked: Server) -> None:
    """The metrics token is 403 on the gateway and on a write of the API."""
    headers = {"Authorization": f"Bearer {METRICS}"}
    chat = httpx.post(
        locked.url("/v1/chat/completions"), json={"model": "alpha", "messages": ASK},
        headers=headers, timeout=30,
    )  # fmt: skip
    assert chat.status_code == 403, chat.text
    judgment = {"agent_id": "alpha", "contract_id": "c-1", "score": 8.0}
    posted = httpx.post(locked.url("/oracle/judgments"), json=judgment, headers=headers)
    assert posted.status_code == 403, posted.text


def test_the_traffic_page_names_clients_to_an_admin_only(locked: Server) -> None:
    """Anonymous, a client's and the metrics token: the page shows '2 clients' and their
    spend summed (one answer each), no client's name; an admin's token: a row per client."""
    for _ in range(100):  # a budgeted client's spend is read back from the store each second
        if "$0.000050 today" in _get(locked, "/dashboard/traffic", None).text:
            break
        time.sleep(0.1)
    for token in (None, TEAM_A, METRICS):
        page = _get(locked, "/dashboard/traffic", token)
        assert page.status_code == 200, page.text
        assert "team-a" not in page.text
        assert "team-b" not in page.text
        summed = re.search(r'<p id="traffic-clients-summed">([^<]*)</p>', page.text)
        assert summed is not None, page.text
        assert summed.group(1) == (  # $0.000025 an answer
            "2 clients: $0.000050 today (UTC), $0.000050 this month, $0.000050 in total."
        )
        assert 'id="traffic-clients"' not in page.text
    admin = _get(locked, "/dashboard/traffic", ADMIN)
    assert admin.status_code == 200
    assert 'data-client="team-a"' in admin.text
    assert 'data-client="team-b"' in admin.text
    assert "traffic-clients-summed" not in admin.text


def test_without_a_metrics_token_metrics_stay_open_and_serve_warns(gateway: Server) -> None:
    """With client tokens and no metrics token, ``/metrics`` answers anyone (as before)
    and `serve` warns at start that it shows the clients."""
    assert _get(gateway, "/metrics", None).status_code == 200
    assert _get(gateway, "/metrics", CLIENT).status_code == 200
    assert "client tokens and no metrics token configured" in gateway.output()
