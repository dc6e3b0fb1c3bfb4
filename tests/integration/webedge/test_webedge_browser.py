"""A real browser through the web edge: Debian's Chromium (headless) loads a page from
another origin, which calls a real table service through the edge with `fetch` — the
CORS preflight, the exposed headers, the trailer frame and a stream read as it comes
are Chromium's own, not a test client's."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.integration.table.conftest import RunningTableService
from tests.integration.webedge.test_webedge_table import Edge, running_edge
from tests.support.pages import chromium_command
from tests.support.tables import token

pytestmark = pytest.mark.integration

WAIT_SECONDS = 60.0
"""Only a bound on a hang: the page's own promise is awaited."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edge</title></head>
<body><pre id="out">running</pre>
<script>
const EDGE = %(edge)s, TOKEN = %(token)s, TABLE = "kozyr.table.v1.TableService";
const frame = (b64) => {
  const message = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const body = new Uint8Array(5 + message.length);
  new DataView(body.buffer).setUint32(1, message.length);
  body.set(message, 5);
  return body;
};
function frames(bytes) {  // [flag, payload] of each whole frame
  const found = [];
  for (let at = 0; at + 5 <= bytes.length; ) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 4).getUint32(0);
    found.push([bytes[at], bytes.slice(at + 5, at + 5 + length)]);
    at += 5 + length;
  }
  return found;
}
const trailers = (payload) => Object.fromEntries(
  new TextDecoder().decode(payload).split("\\r\\n").filter((line) => line)
    .map((line) => [line.split(":")[0], line.slice(line.indexOf(":") + 1).trim()]));
async function call(method, b64, extra) {
  return fetch(`${EDGE}/${TABLE}/${method}`, {
    method: "POST", body: frame(b64),
    headers: {"content-type": "application/grpc-web+proto", "x-grpc-web": "1",
              "authorization": `Bearer ${TOKEN}`, ...extra}});
}
window.done = (async () => {
  const out = {};
  try {
    const got = await call("GetTable", %(get)s, {"x-request-id": "r".repeat(129)});
    const all = frames(new Uint8Array(await got.arrayBuffer()));
    out.unary = {http: got.status, frames: all.map((f) => f[0]),
                 trailers: trailers(all[all.length - 1][1]),
                 requestId: got.headers.get("x-request-id")};
    const refused = await call("GetTable", %(get)s, {"authorization": "Bearer x",
                                                     "accept-language": "ro"});
    const last = frames(new Uint8Array(await refused.arrayBuffer())).pop();
    out.refused = trailers(last[1]);
    const watch = await call("WatchTable", %(watch)s, {"grpc-timeout": "800m"});
    const reader = watch.body.getReader();
    let buffer = new Uint8Array(0);
    out.stream = [];
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer); joined.set(value, buffer.length); buffer = joined;
      out.stream.push(frames(buffer).map((f) => f[0]).join(","));  // what had arrived
    }
    out.streamEnd = trailers(frames(buffer).pop()[1]);
  } catch (error) {
    out.error = String(error);
  }
  document.getElementById("out").textContent = "done";
  return out;
})();
</script></body></html>
"""


async def _serve_page(page: str) -> AsyncGenerator[str, None]:
    """The page on a server of its own: another origin than the edge's."""

    async def index(_request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    app = web.Application()
    app.add_routes([web.get("/", index)])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    finally:
        await runner.cleanup()


def _b64(message: pb.GetTableRequest | pb.WatchTableRequest) -> str:
    return json.dumps(base64.b64encode(message.SerializeToString()).decode())


async def test_chromium_calls_through_the_edge_from_another_origin(
    table_service: RunningTableService, tmp_path: Path
) -> None:
    async with TableClient(table_service.target, token("mm", Role.SERVICE)) as mm:
        created = await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", "bo", "cy"])
    async with running_edge(table_service) as edge:  # allows http://127.0.0.1:*
        page = PAGE % {
            "edge": json.dumps(edge.url),
            "token": json.dumps(token("ana")),
            "get": _b64(pb.GetTableRequest(table_id=created.table_id)),
            "watch": _b64(pb.WatchTableRequest(table_id=created.table_id)),
        }
        result = await _run_page(edge, page, tmp_path)
    assert "error" not in result, result
    unary = result["unary"]
    assert unary["http"] == 200
    assert unary["frames"] == [0, 128], "one message, then the trailer frame"
    assert unary["trailers"]["grpc-status"] == "0"
    assert unary["requestId"], "an exposed header the page can read"
    assert result["refused"]["grpc-status"] == "16"
    assert result["refused"]["grpc-status-details-bin"]
    assert result["stream"][0] == "0", "the first view arrived alone, before the end"
    assert result["stream"][-1] == "0,128"
    assert result["streamEnd"]["grpc-status"] == "4", "the deadline ended the watch"


async def _run_page(edge: Edge, page: str, tmp_path: Path) -> dict[str, Any]:
    """Load the page in headless Chromium and wait for what its script found (its
    `window.done` promise), over the DevTools protocol."""
    pages = _serve_page(page)
    url = await anext(pages)
    profile = tmp_path / "profile"
    browser = await asyncio.create_subprocess_exec(
        *chromium_command(profile, "--remote-debugging-port=0", "about:blank"),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(WAIT_SECONDS), aiohttp.ClientSession() as session:
            port = await _devtools_port(profile)
            async with session.get(f"http://127.0.0.1:{port}/json/list") as listed:
                (target,) = [t for t in await listed.json() if t["type"] == "page"]
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                await _devtools(ws, 1, "Page.enable", {})
                await _devtools(ws, 2, "Page.navigate", {"url": url})
                await _until_loaded(ws)
                answer = await _devtools(
                    ws,
                    3,
                    "Runtime.evaluate",
                    {"expression": "window.done", "awaitPromise": True, "returnByValue": True},
                )
    finally:
        browser.kill()
        await browser.wait()
        await pages.aclose()
    result: dict[str, Any] = answer["result"]["value"]
    return result


async def _devtools_port(profile: Path) -> int:
    """The port Chromium chose, from the file it writes in its profile."""
    written = profile / "DevToolsActivePort"
    while not written.exists() or not written.read_text().strip():  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return int(written.read_text().split()[0])


async def _devtools(
    ws: aiohttp.ClientWebSocketResponse, ident: int, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Send one DevTools command; its result (events meanwhile are skipped)."""
    await ws.send_json({"id": ident, "method": method, "params": params})
    while True:
        message = await ws.receive_json()
        if message.get("id") == ident:
            assert "error" not in message, message
            result: dict[str, Any] = message["result"]
            return result


async def _until_loaded(ws: aiohttp.ClientWebSocketResponse) -> None:
    while (await ws.receive_json()).get("method") != "Page.loadEventFired":
        pass
