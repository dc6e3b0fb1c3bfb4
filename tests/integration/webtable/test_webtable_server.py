"""The page server over real HTTP: the page and its headers, where the edge is, and
development tokens only where they are switched on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from kozyr.runtime.auth import Role, TokenVerifier
from kozyr.webtable.server import PageServer
from kozyr.webtable.settings import WebTableSettings
from kozyr.webtable.texts import BAD_NAME, NO_DEV_LOGIN
from tests.support.tables import JWT_KEY


@pytest.fixture
def page_root(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>")
    (tmp_path / "app.js").write_text("console.log(1)")
    return tmp_path


async def serve(**settings: Any) -> TestServer:
    server = TestServer(PageServer(WebTableSettings.load(database_url=None, **settings)).app())
    await server.start_server()
    return server


@pytest.fixture
async def dev_page(page_root: Path) -> AsyncIterator[TestServer]:
    server = await serve(
        jwt_key=JWT_KEY,
        webtable_dev_login=True,
        webtable_root=str(page_root),
        webtable_edge_port=8123,
    )
    yield server
    await server.close()


async def test_the_page_and_its_headers(dev_page: TestServer) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(dev_page.make_url("/")) as answer:
            assert answer.status == 200
            assert await answer.text() == "<!doctype html><title>t</title>"
            policy = answer.headers["Content-Security-Policy"]
            assert f"connect-src 'self' http://{dev_page.host}:8123;" in policy
            assert answer.headers["X-Frame-Options"] == "DENY"
        async with http.get(dev_page.make_url("/app.js")) as answer:
            assert answer.content_type == "text/javascript"
        async with http.get(dev_page.make_url("/secrets.txt")) as answer:
            assert answer.status == 404
        async with http.get(dev_page.make_url("/style.css")) as answer:
            assert answer.status == 503, "not built: said so"
            assert "make install" in await answer.text()
        async with http.get(dev_page.make_url("/config.json")) as answer:
            assert await answer.json() == {"edgePort": 8123, "devLogin": True}


async def test_a_dev_token_for_a_name(dev_page: TestServer) -> None:
    url = dev_page.make_url("/dev/token")
    async with aiohttp.ClientSession() as http, http.post(url, json={"player": "ana"}) as answer:
        body = await answer.json()
    assert body["player"] == "ana"
    principal = TokenVerifier(JWT_KEY, "HS256").verify(body["token"])
    assert (principal.subject, principal.role) == ("ana", Role.PLAYER)


@pytest.mark.parametrize(
    "body", [{"player": "a b"}, {"player": ""}, {"player": "x" * 65}, {"player": 7}, ["ana"]]
)
async def test_a_bad_name_is_refused_in_every_language(dev_page: TestServer, body: object) -> None:
    url = dev_page.make_url("/dev/token")
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as answer:
        assert answer.status == 400
        texts = (await answer.json())["error"]
    assert set(texts) == {"en", "ro", "it"}
    if isinstance(body, dict) and isinstance(body["player"], str):
        assert texts == dict(BAD_NAME)


async def test_no_dev_tokens_unless_switched_on(page_root: Path) -> None:
    server = await serve(jwt_key=JWT_KEY, webtable_root=str(page_root))
    try:
        async with aiohttp.ClientSession() as http:
            url = server.make_url("/dev/token")
            async with http.post(url, json={"player": "ana"}) as answer:
                assert answer.status == 404
                assert (await answer.json())["error"] == dict(NO_DEV_LOGIN)
            async with http.get(server.make_url("/config.json")) as answer:
                assert (await answer.json())["devLogin"] is False
    finally:
        await server.close()
