"""``/docs`` and ``/redoc`` need no internet: every asset they name is served here."""

from __future__ import annotations

import re

import httpx
import pytest

from agentladder.services.container import Services
from tests.inprocess import call_app

CONFIG: dict[str, object] = {"agents": []}
URL = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url\s*:\s*["']([^"']+)["']""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_name_only_local_assets_and_each_is_served(page: str) -> None:
    """Every script, style, icon and spec URL of the page is a local path, answered 200."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        html = await client.get(page)
        assert html.status_code == 200
        urls = {a or b for a, b in URL.findall(html.text)}
        assert "/openapi.json" in urls
        scripts = [u for u in urls if u.endswith(".js")]
        assert scripts, html.text
        for url in urls:
            assert url.startswith("/"), url
            assert not url.startswith("//"), url
            served = await client.get(url)
            assert served.status_code == 200, url
            assert served.content, url
        assert "cdn" not in html.text.lower()
        assert "fonts.googleapis" not in html.text

    call_app(CONFIG, body)
