"""Look-alike ids (a Cyrillic a, U+0430, in ``atlas``, fullwidth letters, combining marks),
against a real `agentladder serve`: every write refuses them with one line naming the
field and the character, nothing is stored; an id wholly in Cyrillic or CJK is taken."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

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
CYRILLIC_A = "\u0430"
FULLWIDTH_A = "\uff41"
ACUTE = "\u0301"


def _refused(answer: httpx.Response, field: str, code_point: str) -> None:
    """422 naming ``field`` and the code point, in one line."""
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
    }


def test_every_write_refuses_look_alike_ids(tmp_path: Path) -> None:
    """A heartbeat's tag and model, a judgment's contract id, a batch item's, a
    validation's, a route's tag, a query's tag: 422 naming the field and the character
    (U+0430 CYRILLIC SMALL LETTER A and the like); the stored state is unchanged."""
    server = start_server(tmp_path, CONFIG)
    try:
        before = _state(server)

        def post(path: str, body: dict[str, Any]) -> httpx.Response:
            return httpx.post(server.url(path), json=body, timeout=10)

        heartbeat = {"name": "w", "capability_tags": [CYRILLIC_A + "udit"]}
        _refused(post("/agents/heartbeat", heartbeat), "capability_tags.0",
                 "U+0430 CYRILLIC SMALL LETTER A")  # fmt: skip
        model = {"name": "w", "model_name": "gpt-4" + FULLWIDTH_A}
        _refused(post("/agents/heartbeat", model), "model_name", "U+FF41")
        judgment = {"agent_id": "sim_a", "contract_id": CYRILLIC_A + "tlas-1", "score": 9.0}
        _refused(post("/oracle/judgments", judgment), "contract_id", "U+0430")
        good = {"agent_id": "sim_a", "contract_id": "c-ok", "score": 9.0}
        batch = {"judgments": [good, {**good, "contract_id": "cafe" + ACUTE}]}
        _refused(post("/oracle/judgments/batch", batch), "judgments.1.contract_id", "U+0301")
        verdict = {"agent_id": "sim_a", "contract_id": "c-\u03bfk", "passed": False}
        _refused(post("/oracle/validations", verdict), "contract_id", "U+03BF")
        _refused(post("/route", {"count": 2, "tags": ["\uff41udit"]}), "tags.0", "U+FF41")
        directory = httpx.get(server.url("/agents/directory"),
                              params={"tag": CYRILLIC_A + "udit"}, timeout=10)  # fmt: skip
        _refused(directory, "query.tag", "U+0430")
        assert _state(server) == before
    finally:
        server.stop()


def test_ids_wholly_in_another_script_are_taken(tmp_path: Path) -> None:
    """A contract id all in Cyrillic and one mixing Latin with CJK are judged (200), and
    an agent may declare a CJK tag."""
    server = start_server(tmp_path, CONFIG)
    try:
        for contract in ("\u043a\u043e\u043d\u0442\u0440\u0430\u043a\u0442-1", "gpt-\u5408\u540c"):
            body = {"agent_id": "sim_a", "contract_id": contract, "score": 8.0}
            answer = httpx.post(server.url("/oracle/judgments"), json=body, timeout=10)
            assert answer.status_code == 200, answer.text
            assert answer.json()["contract_id"] == contract
        beat = {"name": "w", "capability_tags": ["\u76e3\u67fb"]}
        answer = httpx.post(server.url("/agents/heartbeat"), json=beat, timeout=10)
        assert answer.status_code == 200, answer.text
    finally:
        server.stop()


def test_serve_refuses_a_configured_look_alike_tag(tmp_path: Path) -> None:
    """A configured tag with a Cyrillic letter among Latin ones: serve exits 1 with one
    line naming its path in the YAML and the character; nothing is created."""
    path = tmp_path / "bad.yaml"
    path.write_text('agents:\n  - {name: a, capability_tags: ["\\u0430udit"]}\n', "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", "--config", str(path),
         "--db", str(tmp_path / "x.db"), "--port", str(free_port())],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    said = (done.stdout + done.stderr).strip().splitlines()
    assert len(said) == 1, said
    assert "agents[a].capability_tags.0" in said[0]
    assert "U+0430 CYRILLIC SMALL LETTER A" in said[0]
    assert not (tmp_path / "x.db").exists()
