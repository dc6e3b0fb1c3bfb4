"""The web table in a real browser against the real stack: table, matchmaking, bots and
clock processes (real PostgreSQL and NATS — the clock's, which keeps message schedules),
the gRPC-Web edge (`kozyr.webedge`, forwarding all four client-facing services) and the
page server (`kozyr.webtable`) as processes, and Debian's Chromium driven by npm's
playwright-core (clients/web/test/browser/drive.mjs). Skipped, with the reason, where
node, Chromium or the built page (`make install`) is missing."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kozyr.client import TableClient
from kozyr.infra import free_port
from kozyr.runtime.auth import Role
from tests.e2e.clock.conftest import ClockServiceProcess
from tests.e2e.conftest import (
    WebEdgeProcess,
    WebPageProcess,
    deployed,
    service_env,
    web_edge_env,
)
from tests.e2e.leaks import LoggedEvent, Seen, find_leaks, logged_events, seen_refusal
from tests.e2e.matchmaking.conftest import MatchmakingStack
from tests.support.clock import delete_clock_streams
from tests.support.tables import token

REPO = Path(__file__).resolve().parents[3]
WEB = REPO / "clients" / "web"
DRIVER = WEB / "test" / "browser" / "drive.mjs"
CHROMIUM = Path("/usr/bin/chromium")
DRIVE_TIMEOUT = 150.0
TABLE_METHODS = frozenset(
    f"kozyr.table.v1.TableService/{m}" for m in ("GetTable", "WatchTable", "SubmitAction")
)


def missing_browser_parts() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    if shutil.which("node") is None:
        return "node is not installed (the web client and its browser tests need Node.js 20+)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (`make install` installs Debian's chromium)"
    if not (WEB / "node_modules" / "playwright-core").is_dir():
        return "clients/web/node_modules is missing: run `make install`"
    if not (WEB / "dist" / "page" / "app.js").is_file():
        return "the web page is not built (clients/web/dist/page): run `make install`"
    return None


@dataclass
class WebStack:
    """The stack behind the page, and where the page is."""

    mm: MatchmakingStack
    edge: WebEdgeProcess
    page: WebPageProcess

    @property
    def page_url(self) -> str:
        return f"http://127.0.0.1:{self.page.port}/"

    async def admin_history(self, table_id: str) -> list[LoggedEvent]:
        async with TableClient(self.mm.table.target, token("admin", Role.ADMIN)) as admin:
            return logged_events(await admin.history(table_id))


@pytest.fixture
def clock_ahead() -> float:
    """How far the clock service runs ahead of the wall clock (its test-only time
    skipping, `clock_time_offset_seconds`): every turn's deadline fires that much early.
    A test that waits for a turn to run out parametrizes it (`clock_ahead=[176]`)."""
    return 0.0


@pytest.fixture
async def mm_stack(
    database_url: str,
    matchmaking_database_url: str,
    clock_nats_url: str,
    subject_root: str,
    tmp_path: Path,
) -> AsyncIterator[MatchmakingStack]:
    """The matchmaking stack (tests/e2e/matchmaking) on the clock's NATS: the clock
    service keeps its turn timers as JetStream message schedules (nats-server 2.12+)."""
    reason = missing_browser_parts()
    if reason:
        pytest.skip(reason)
    async with deployed(database_url, clock_nats_url, subject_root, tmp_path) as table:
        stack = MatchmakingStack(table, matchmaking_database_url, tmp_path)
        stack.set_clock(0)
        try:
            yield stack
        finally:
            await stack.close()
            await delete_clock_streams(clock_nats_url, subject_root)


async def start_clock(stack: MatchmakingStack, ahead: float) -> ClockServiceProcess:
    """The clock service on the stack's table: turn deadlines (ExpireTurn), presence
    from the page's heartbeats (SetSeatPresence), `ahead` seconds ahead of the wall."""
    port = free_port()
    table = stack.table
    env = service_env(table.database_url, table.nats_url, table.subject_root, port)
    env.update(KOZYR_TABLE_TARGET=table.target, KOZYR_CLOCK_TIME_OFFSET_SECONDS=str(ahead))
    clock = ClockServiceProcess(env, port, stack.log_dir / "clock.log")
    stack.others.append(clock)
    await clock.start()
    return clock


@pytest.fixture
async def web_stack(mm_stack: MatchmakingStack, clock_ahead: float) -> WebStack:
    replica = await mm_stack.start_matchmaking()
    bots = await mm_stack.start_bots()
    clock = await start_clock(mm_stack, clock_ahead)
    table = mm_stack.table
    edge_port, page_port = free_port(), free_port()
    backends = {
        "table": table.target,
        "matchmaking": replica.target,
        "bots": bots.target,
        "clock": clock.target,
    }
    edge_env = web_edge_env(edge_port, backends, origins=f"http://127.0.0.1:{page_port}")
    env = service_env(table.database_url, table.nats_url, table.subject_root, free_port())
    env.update(
        KOZYR_WEBTABLE_EDGE_PORT=str(edge_port),
        KOZYR_WEBTABLE_HOST="127.0.0.1",
        KOZYR_WEBTABLE_PORT=str(page_port),
        KOZYR_WEBTABLE_DEV_LOGIN="true",
    )
    edge = WebEdgeProcess(edge_env, edge_port, mm_stack.log_dir / "webedge.log")
    page = WebPageProcess(env, page_port, mm_stack.log_dir / "webtable.log")
    mm_stack.others += [edge, page]
    await edge.start()
    await page.start()
    return WebStack(mm_stack, edge, page)


async def handshake(
    folder: Path, asked: str, answer: str, act: Callable[[], Awaitable[None]]
) -> None:
    """Wait for the driver's `asked` file (drive.mjs `handshake`), `act`, then answer."""
    async with asyncio.timeout(DRIVE_TIMEOUT):
        while True:  # the driver's file is the condition (a deadline, not a pause)
            if await asyncio.to_thread((folder / asked).exists):
                break
            await asyncio.sleep(0.05)
    await act()
    await asyncio.to_thread((folder / answer).write_text, "")


async def drop_the_edge(stack: WebStack, folder: Path) -> None:
    """The edge killed when the page asks (`drop-now`), started again on the same port
    when it has seen the drop and made its move (`back-now`)."""

    async def kill() -> None:
        stack.edge.kill()

    await handshake(folder, "drop-now", "dropped", kill)
    await handshake(folder, "back-now", "back", stack.edge.start)


async def drive(
    stack: WebStack,
    scenario: str,
    tmp_path: Path,
    during: Callable[[Path], Coroutine[Any, Any, None]] | None = None,
    **args: Any,
) -> dict[str, Any]:
    """Run one scenario of drive.mjs in Chromium; its OUT.json. Screenshots are kept in
    `tmp_path/shots` (the path is printed: pytest -s shows it)."""
    shots = tmp_path / "shots"
    shots.mkdir()
    given = {"pageUrl": stack.page_url, "shots": str(shots), "chromium": str(CHROMIUM), **args}
    args_path, out_path = tmp_path / "args.json", tmp_path / "out.json"
    args_path.write_text(json.dumps(given))
    process = await asyncio.create_subprocess_exec(
        "node", str(DRIVER), scenario, str(args_path), str(out_path),
        cwd=WEB, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    beside: asyncio.Task[None] | None = asyncio.create_task(during(tmp_path)) if during else None
    try:
        async with asyncio.timeout(DRIVE_TIMEOUT):
            output, _ = await process.communicate()
        if beside is not None:
            beside.cancel() if process.returncode else await beside
    except TimeoutError:
        process.kill()
        await process.wait()
        if beside is not None:
            beside.cancel()
        raise
    out: dict[str, Any] = json.loads(out_path.read_text()) if out_path.exists() else {}
    print(f"{scenario}: {out.get('seconds')} s in the browser, screenshots in {shots}")
    print("\n".join(out.get("steps", [])))
    assert process.returncode == 0, (
        f"{scenario} failed: {output.decode()[-3000:]}\nsteps: {out.get('steps')}\n"
        f"table: {out.get('failureTable')}\nstatus: {out.get('failureStatus')}\n"
        f"screenshots: {out.get('shots')}"
    )
    # a dropped edge makes Chromium log the failed requests themselves: expected then
    dropped = "Failed to load resource: net::"
    errors = [e for e in out["consoleErrors"] if not (during and e.startswith(dropped))]
    assert errors == [], errors
    return out


def seen_by_page(received: list[dict[str, Any]]) -> tuple[int | None, list[Seen]]:
    """Everything the page's client received, as the leak checker reads it: the views
    of GetTable, WatchTable and SubmitAction answers; every other answer (hints,
    matchmaking, heartbeats) and every error's texts as free data at the version the
    page showed then. And the seat the views are for."""
    seen: list[Seen] = []
    seat: int | None = None
    for number, item in enumerate(received):
        where = f"#{number} {item['method']}"
        shown = int(item["shownVersion"])
        if "error" in item:
            error = item["error"]
            seen.append(seen_refusal(shown, list(error["messages"].values()), error.get("reason")))
        elif item["method"] in TABLE_METHODS and "view" in item["message"]:
            view = item["message"]["view"]
            seat = view.get("seat", seat)
            seen.append(Seen("view", int(view["version"]), view, where))
        else:
            seen.append(Seen("refusal", shown, item["message"], where))
    return seat, seen


async def leaks_seen_by_page(
    stack: WebStack, game: str, table_id: str, received: list[dict[str, Any]]
) -> tuple[list[str], int]:
    """The leak checker over every message the page received; (problems, views)."""
    seat, seen = seen_by_page(received)
    assert seat is not None, "the page received no view of its seat"
    admin = await stack.admin_history(table_id)
    views = sum(1 for s in seen if s.kind == "view")
    return find_leaks(game, admin, seat, seen), views
