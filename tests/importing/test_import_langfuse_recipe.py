"""docs/integrations.md's Langfuse recipe, run as written against a real HTTP server
answering Langfuse's public API in its paged shape (from the hand-written pages of
tests/importing/data/langfuse), then imported: every page saved, every score imported."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from tests.importing.helpers import run_measured

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "langfuse"
KEYS = ("pk-lf-test", "sk-lf-test")
MOST = 3
"""Entries the test server answers a page at most (Langfuse: 100), so that every
endpoint takes several pages."""


def _entries() -> dict[str, list[dict[str, Any]]]:
    """Every entry of the fixture's pages, by the endpoint that lists it."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(DATA.iterdir()):
        pages = path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]
        endpoint = re.sub(r"(-page-\d+)?\.jsonl?$", "", path.name)
        for page in pages:
            found.setdefault(endpoint, []).extend(json.loads(page)["data"])
    return found


class _Langfuse(BaseHTTPRequestHandler):
    entries: ClassVar[dict[str, list[dict[str, Any]]]] = {}
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        token = base64.b64encode(":".join(KEYS).encode()).decode()
        endpoint = url.path.removeprefix("/api/public/")
        if self.headers.get("Authorization") != f"Basic {token}":
            self._answer(401, {"message": "Invalid credentials"})
            return
        if endpoint not in self.entries:
            self._answer(404, {"message": "Not found"})
            return
        self.asked.append(f"{endpoint}?{url.query}")
        items = self.entries[endpoint]
        if endpoint == "observations" and "type" in query:
            items = [item for item in items if item.get("type") == query["type"]]
        limit, page = min(int(query.get("limit", "50")), MOST), int(query.get("page", "1"))
        pages = -(-len(items) // limit)
        data = items[(page - 1) * limit : page * limit]
        meta = {"page": page, "limit": limit, "totalItems": len(items), "totalPages": pages}
        self._answer(200, {"data": data, "meta": meta})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def langfuse() -> Iterator[str]:
    """A Langfuse public API on loopback, its address."""
    _Langfuse.entries, _Langfuse.asked = _entries(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Langfuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _blocks() -> list[str]:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("\n## Langfuse\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_recipe_saves_every_page_and_the_import_takes_every_score(
    tmp_path: Path, langfuse: str
) -> None:
    save, imported = _blocks()
    script = "\n".join(line for line in save.splitlines() if not line.startswith("export "))
    env = {**os.environ, "LANGFUSE_HOST": langfuse, "LANGFUSE_PUBLIC_KEY": KEYS[0],
           "LANGFUSE_SECRET_KEY": KEYS[1]}  # fmt: skip
    done = subprocess.run(["bash", "-euc", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    saved = sorted(path.name for path in (tmp_path / "langfuse-export").iterdir())
    assert saved == [
        "observations-1.json", "observations-2.json", "observations-3.json",
        "score-configs-1.json", "scores-1.json", "scores-2.json", "scores-3.json",
        "traces-1.json", "traces-2.json",
    ]  # fmt: skip
    assert "scores?page=1&limit=100&fromTimestamp=2026-11-01T00:00:00Z" in _Langfuse.asked
    command = imported.replace("\\\n", " ").split()
    assert command[:4] == ["agentladder", "import", "langfuse-export", "--format"]
    args = [arg for arg in command[1:] if arg != "agentladder.db"]
    args[args.index("--db") : args.index("--db") + 1] = ["--db", str(tmp_path / "x.db")]
    args[1] = str(tmp_path / "langfuse-export")
    result = run_measured([*args, "--task-type", "support", "--json"])
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert (summary["imported"], summary["refused"]) == (9, 0)
    assert "gpt4o" in summary["new_agents"]
    assert "claude" in summary["new_agents"]
