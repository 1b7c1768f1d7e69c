"""Invisible characters in names, tags and ids, at every entry point, against a real
`agentladder serve` on loopback and the real command line: each is refused with one line
naming the field and the character, and nothing is stored. Before: ``audit`` plus a
zero-width space was a tag of its own that displayed as ``audit``, and contract ids took
format characters, line separators and no-break spaces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served import Server, free_port, start_server

CONFIG = """
agents:
  - name: sim_a
    capability_tags: [audit]
    backend: {kind: simulated, quality: 7.0}
  - name: sim_b
    capability_tags: [audit]
    backend: {kind: simulated, quality: 8.0}
"""
ZWSP, NBSP, LSEP, BOM, FILLER = "\u200b", "\u00a0", "\u2028", "\ufeff", "\u3164"


def _refused(answer: httpx.Response, field: str, code_point: str) -> None:
    """422 invalid_input naming ``field`` and the code point, in one line."""
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == field, error
    assert code_point in error["message"], error
    assert "\n" not in error["message"], error


def _state(server: Server) -> dict[str, Any]:
    """What is stored, read over HTTP (heartbeat times left out)."""
    agents = httpx.get(server.url("/agents"), timeout=10).json()["agents"]
    return {
        "agents": [(a["name"], a["capability_tags"], a["model_name"]) for a in agents],
        "profile": httpx.get(server.url("/oracle/profiles/sim_a"), timeout=10).json(),
        "deliberations": httpx.get(server.url("/deliberations"), timeout=10).json(),
    }


def test_every_write_refuses_invisible_characters(tmp_path: Path) -> None:
    """Heartbeat tags and model, a judgment's contract id, a batch item's, a validation's,
    a deliberation's and a route's tags, a query's tag: 422 naming the field and the code
    point; the stored state is unchanged."""
    server = start_server(tmp_path, CONFIG)
    try:
        before = _state(server)

        def post(path: str, body: dict[str, Any]) -> httpx.Response:
            return httpx.post(server.url(path), json=body, timeout=10)

        _refused(post("/agents/heartbeat", {"name": "w", "capability_tags": ["audit" + ZWSP]}),
                 "capability_tags.0", "U+200B")  # fmt: skip
        _refused(post("/agents/heartbeat", {"name": "w", "model_name": "gpt" + NBSP + "4o"}),
                 "model_name", "U+00A0")  # fmt: skip
        judgment = {"agent_id": "sim_a", "contract_id": "c" + LSEP + "1", "score": 9.0}
        _refused(post("/oracle/judgments", judgment), "contract_id", "U+2028")
        good = {"agent_id": "sim_a", "contract_id": "c-ok", "score": 9.0}
        batch = {"judgments": [good, {**good, "contract_id": BOM + "c2"}]}
        _refused(post("/oracle/judgments/batch", batch), "judgments.1.contract_id", "U+FEFF")
        verdict = {"agent_id": "sim_a", "contract_id": "c" + ZWSP, "passed": False}
        _refused(post("/oracle/validations", verdict), "contract_id", "U+200B")
        select = {"count": 2, "tags": [FILLER]}
        asked = {"user_query": "Which controls?", "select": select, "scope": "quick"}
        _refused(post("/deliberation", asked), "select.tags.0", "U+3164")
        _refused(post("/route", select), "tags.0", "U+3164")
        directory = httpx.get(server.url("/agents/directory"), params={"tag": "audit" + ZWSP})
        _refused(directory, "query.tag", "U+200B")
        assert _state(server) == before
    finally:
        server.stop()


def _serve(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "bad.yaml"
    path.write_text(config, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(path),
         "--db", str(tmp_path / "x.db"), "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ("agents:\n  - {name: a, capability_tags: [\"audit\\u200b\"]}\n",
         "agents[a].capability_tags.0"),
        ("agents:\n  - {name: a, provider_id: \"open\\u202eai\"}\n", "agents[a].provider_id"),
        ("api:\n  tokens:\n    - {role: agent, token: abcdefghijklmnopqr,"
         " agent_id: \"sim\\u200b\"}\n", "api.tokens[0].agent_id"),
    ],
)  # fmt: skip
def test_serve_refuses_a_config_with_invisible_characters(
    tmp_path: Path, config: str, field: str
) -> None:
    """A configured tag, provider or token agent with an invisible character: serve exits
    1 with one line naming the path in the YAML, nothing created."""
    done = _serve(tmp_path, config)
    assert done.returncode == 1, done.stdout + done.stderr
    assert field in done.stdout, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "x.db").exists()


def test_import_refuses_a_line_with_an_invisible_contract_id(tmp_path: Path) -> None:
    """`agentladder import` of JSONL: the line whose contract id holds a zero-width space is
    refused with its line number and the field; the other line is imported."""
    lines = [{"agent_id": "imp", "contract_id": "c1", "score": 8},
             {"agent_id": "imp", "contract_id": "c" + ZWSP + "2", "score": 8}]  # fmt: skip
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "import", str(history),
         "--db", str(tmp_path / "i.db"), "--json"],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert (summary["imported"], summary["refused"]) == (1, 1)
    problem = summary["problems"][0]
    assert problem["where"].endswith("history.jsonl:2")
    assert problem["error"].startswith("contract_id: ")
    assert "U+200B" in problem["error"]


@pytest.mark.parametrize(
    "char",
    ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\u0085", "\t",
     "\x00", "\u2028", "\u2029", "\u00a0", "\u2003", "\u3000", "\u202f", "\u3164", "\u2800",
     "\ufe0f", "\U000e0041"],
)  # fmt: skip
def test_invisible_and_confusable_characters_are_found(char: str) -> None:
    """Format, control, separator and non-ASCII space characters, and the blank letters,
    are found where they sit; plain text, a space and accented or CJK letters are not."""
    from agentladder.domain.text import invisible

    assert invisible("ab" + char + "c") == (2, char)
    assert invisible("audit trail é 監査 ok-1.2_x") is None


async def _store_legacy(path: Path) -> None:
    """A registration and a judgment stored before the rule, holding a zero-width space."""
    from agentladder.domain.agents import AgentConfig
    from agentladder.store.records import Registration
    from agentladder.store.url import open_store

    store = await open_store(f"sqlite:///{path}")
    try:
        config = AgentConfig.model_construct(
            name="old", provider_id="", model_name="m" + ZWSP, description="",
            capability_tags=("audit" + ZWSP,), signing_schemes=(),
            input_price_per_mtok=0.0, output_price_per_mtok=0.0,
        )  # fmt: skip
        await store.put_registration(Registration(config=config, first_seen=1.0, last_seen=1.0))
    finally:
        await store.close()


def test_what_was_stored_before_the_rule_still_reads(tmp_path: Path) -> None:
    """A registration stored with a zero-width space in its tag and model (before the rule)
    is listed, shown and put in the directory as it was; only new writes are refused."""
    import asyncio

    asyncio.run(_store_legacy(tmp_path / "served.db"))
    server = start_server(tmp_path, CONFIG)
    try:
        with httpx.Client(timeout=10) as client:
            old = client.get(server.url("/agents/old"))
            assert old.status_code == 200, old.text
            assert old.json()["capability_tags"] == ["audit" + ZWSP]
            assert client.get(server.url("/dashboard")).status_code == 200
            assert client.get(server.url("/dashboard/agents/old")).status_code == 200
            names = [a["name"] for a in client.get(server.url("/agents")).json()["agents"]]
            assert "old" in names
    finally:
        server.stop()
