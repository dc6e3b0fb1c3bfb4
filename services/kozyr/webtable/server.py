"""The page server: static files of the built page, its configuration, dev tokens.

* `GET /` and the page's files, from `KOZYR_WEBTABLE_ROOT` (the checkout's
  clients/web/dist/page by default) — a missing build is a 503 that says to run
  `make install`, not an empty page;
* `GET /config.json`: `{"edgeUrl": …}` or `{"edgePort": …}` (the page then calls its
  own host on that port: `KOZYR_WEBTABLE_EDGE_PORT`) and `{"devLogin": true|false}`;
* `POST /dev/token` `{"player": "ana"}` → `{"player": "ana", "token": "eyJ…"}`, a
  player token for 12 hours signed with the deployment's key — only with
  `KOZYR_WEBTABLE_DEV_LOGIN=true` (`make run` sets it): anyone who reaches the page
  may then play as anyone, which is what a developer's machine wants and nothing else;
* `GET /healthz`: 200 once serving (`make run` waits for it).

Every answer forbids framing and sniffing; the page's Content-Security-Policy lets
it load its own files only and call the edge only.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

from aiohttp import web

from kozyr.runtime.auth import Role, TokenMinter
from kozyr.runtime.logging import get_logger
from kozyr.runtime.process import wait_for_signal
from kozyr.texts import Texts
from kozyr.webtable import texts
from kozyr.webtable.settings import WebTableSettings

_log = get_logger("kozyr.webtable")
DEV_TOKEN_TTL = timedelta(hours=12)
PLAYER_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A development name: what `kozyr token` and the tests use as player ids."""
MAX_BODY_BYTES = 4096
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_ROOT = REPO_ROOT / "clients" / "web" / "dist" / "page"
FILES = {"app.js", "app.js.map", "style.css", "index.html"}
TYPES = {".js": "text/javascript", ".map": "application/json", ".css": "text/css",
         ".html": "text/html"}  # fmt: skip


def refusal(status: int, messages: Texts) -> web.Response:
    """A JSON refusal with its texts in every language (the page picks its own)."""
    return web.json_response({"error": dict(messages)}, status=status)


class PageServer:
    """The page's HTTP app, over `settings` (KOZYR_WEBTABLE_*), and its process
    (`start`, `run_until_signal`: what `kozyr.runtime.process.serve` runs)."""

    def __init__(self, settings: WebTableSettings) -> None:
        self.settings = settings
        self.root = Path(settings.webtable_root) if settings.webtable_root else DEFAULT_ROOT
        self.minter: TokenMinter | None = (
            settings.token_minter() if settings.webtable_dev_login else None
        )
        self._runner: web.AppRunner | None = None

    async def start(self) -> int:
        """Bind KOZYR_WEBTABLE_HOST/PORT and serve; the port (the one picked for 0)."""
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.webtable_host, self.settings.webtable_port)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        port = int(server.sockets[0].getsockname()[1])
        _log.info("web table page started", port=port, dev_login=self.minter is not None)
        return port

    async def run_until_signal(self) -> None:
        """Serve until SIGTERM or SIGINT, then close the server."""
        try:
            await wait_for_signal()
        finally:
            await self.stop()

    async def stop(self) -> None:
        """Close the server (at the signal; a test's end)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=[self._headers])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/config.json", self.config),
                web.post("/dev/token", self.dev_token),
                web.get("/healthz", self.healthz),
                web.get("/{name}", self.file),
            ]
        )
        return app

    def edge_origin(self, request: web.Request) -> str:
        """The edge as this request's browser reaches it (for the page's CSP)."""
        if self.settings.webtable_edge_url:
            return self.settings.webtable_edge_url.rstrip("/")
        host = request.url.host or "127.0.0.1"
        return f"{request.url.scheme}://{host}:{self.settings.webtable_edge_port}"

    @web.middleware
    async def _headers(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        response = await handler(request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-cache"
        response.headers["Content-Security-Policy"] = (
            f"default-src 'self'; connect-src 'self' {self.edge_origin(request)}; "
            "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        )
        return response

    async def index(self, request: web.Request) -> web.StreamResponse:
        return self._serve("index.html")

    async def file(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in FILES:
            raise web.HTTPNotFound()
        return self._serve(name)

    def _serve(self, name: str) -> web.StreamResponse:
        path = self.root / name
        if not path.is_file():
            return web.Response(
                status=503,
                text=f"the web page is not built ({path} is missing): run `make install`\n",
            )
        return web.Response(body=path.read_bytes(), content_type=TYPES[path.suffix])

    async def config(self, request: web.Request) -> web.Response:
        edge: dict[str, object] = (
            {"edgeUrl": self.settings.webtable_edge_url}
            if self.settings.webtable_edge_url
            else {"edgePort": self.settings.webtable_edge_port}
        )
        return web.json_response({**edge, "devLogin": self.minter is not None})

    async def dev_token(self, request: web.Request) -> web.Response:
        if self.minter is None:
            return refusal(404, texts.NO_DEV_LOGIN)
        try:
            body = json.loads(await request.read() or b"null")
        except (ValueError, web.HTTPRequestEntityTooLarge):
            return refusal(400, texts.BAD_REQUEST)
        player = body.get("player") if isinstance(body, dict) else None
        if not isinstance(player, str):
            return refusal(400, texts.BAD_REQUEST)
        if not PLAYER_NAME.fullmatch(player):
            return refusal(400, texts.BAD_NAME)
        token = self.minter.mint(player, Role.PLAYER, ttl=DEV_TOKEN_TTL)
        return web.json_response({"player": player, "token": token})

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")
