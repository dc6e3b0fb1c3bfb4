"""The floor of any durable game action in Python: a bare gRPC call that commits one row.

    .venv/bin/python tests/bench/floor.py --serve   (KOZYR_DATABASE_URL, KOZYR_GRPC_PORT)

A separate `grpc.aio` process with one unary method (`/kozyr.bench.v1.Floor/Commit`, raw
bytes in and out: no proto, no interceptor, no auth) whose handler INSERTs the ~300-byte
request as one jsonb row through an asyncpg pool of the table service's size (20) and
answers once PostgreSQL has committed it. Nothing a game action needs is done: no view,
no rule, no read, no hash, no outbox, no relay. `bench_table.py` drives it with the
same client machinery as the table service (`ServiceClient`: a channel per caller, the
bearer token and retry policy in every call) at the same concurrency, in the same run,
and prints the table service's figures as ratios to it (issue 13).

Second mode, the floor of the same work as a watched move (issue 25): the same process
also serves `Watch` (a server stream per seat of a table, raw bytes) and `Move` (unary).
`Move` commits one ~300-byte row exactly like `Commit`, then pushes one ~300-byte message
to each of the table's N open `Watch` streams; the message names the table's new version
and the seat to move next, and that seat calls `Move` next (`run_watched_floor`). Nothing
else: no game, no per-seat view, no NATS, no auth check. A stream's first message is the
table's state when it opens, like WatchTable's first view.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc

from kozyr.client.channel import ServiceClient, channel_options
from kozyr.infra import free_port, libpq_dsn
from kozyr.infra.servers import stop_process

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.support.tables import OWN_CONNECTION

SERVICE = "kozyr.bench.v1.Floor"
METHOD = f"/{SERVICE}/Commit"
MOVE = f"/{SERVICE}/Move"
WATCH = f"/{SERVICE}/Watch"
PUSH_PAD = 280
"""Bytes of padding in a push: with its header, about the size of a row (~300 bytes)."""
POOL_SIZE = 20
"""The table service's pool (`TableService(pool_size=20)`)."""
START_TIMEOUT = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS floor_rows (
    id bigserial PRIMARY KEY,
    stream text NOT NULL,
    data jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
)
"""
INSERT = "INSERT INTO floor_rows (stream, data) VALUES ($1, $2::jsonb)"


def payload(caller: int, call: int) -> bytes:
    """About 300 bytes of JSON: the size of a typical game event row."""
    body = {
        "stream": f"table-{caller:08d}-0000-0000-0000-000000000000",
        "type": "CardPlayed",
        "data": {"seat": call % 3, "card": "10H", "deal": 3, "trick": call % 8},
        "metadata": {"actor": f"bench-player-{caller}", "role": "player", "turn": call},
        "pad": "x" * 60,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def move_request(table: str, seat: int, version: int, row: bytes) -> bytes:
    """A `Move`: one header line (table, seat, the version the seat saw), then the row."""
    return f"{table} {seat} {version}\n".encode() + row


def push(version: int, next_seat: int) -> bytes:
    """What every stream of a table receives after a move: ~300 bytes, header first."""
    return f"{version} {next_seat}\n".encode() + b"x" * PUSH_PAD


def parse_push(message: bytes) -> tuple[int, int]:
    """(version, seat to move next) of a push."""
    version, _, rest = message.partition(b" ")
    return int(version), int(rest.partition(b"\n")[0])


@dataclass
class _FloorTable:
    """A table of the second mode in the floor process: its version, seats, streams."""

    seats: int
    version: int = 0
    next_seat: int = 0
    streams: list[asyncio.Queue[bytes]] = field(default_factory=list)


# -- the server process ---------------------------------------------------------------------


async def serve(database_url: str, port: int) -> None:
    """Serve `Commit`, `Move` and `Watch` on 127.0.0.1:`port` until SIGTERM."""
    pool = await asyncpg.create_pool(libpq_dsn(database_url), min_size=1, max_size=POOL_SIZE)
    async with pool.acquire() as connection:
        await connection.execute(SCHEMA)
    tables: dict[str, _FloorTable] = {}

    async def commit(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        async with pool.acquire() as connection:
            await connection.execute(INSERT, "floor", request.decode())
        return b"ok"

    async def move(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        header, _, row = request.partition(b"\n")
        table_id, seat, _seen = header.decode().split()
        async with pool.acquire() as connection:
            await connection.execute(INSERT, table_id, row.decode())
        table = tables[table_id]
        table.version += 1
        table.next_seat = (int(seat) + 1) % table.seats
        message = push(table.version, table.next_seat)
        for stream in table.streams:
            stream.put_nowait(message)
        return b"ok"

    async def watch(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        table_id, seats = request.decode().split()
        table = tables.setdefault(table_id, _FloorTable(int(seats)))
        stream: asyncio.Queue[bytes] = asyncio.Queue()
        table.streams.append(stream)
        try:
            yield push(table.version, table.next_seat)
            while True:
                yield await stream.get()
        finally:
            table.streams.remove(stream)

    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Commit": grpc.unary_unary_rpc_method_handler(commit),
            "Move": grpc.unary_unary_rpc_method_handler(move),
            "Watch": grpc.unary_stream_rpc_method_handler(watch),
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1.0)
    await pool.close()


# -- the client ----------------------------------------------------------------------------


class FloorClient(ServiceClient):
    """One caller of the floor: a channel like a PlayerClient's (token, retry policy, a
    connection of its own)."""

    SERVICE = SERVICE

    def __init__(self, target: str, token: str) -> None:
        super().__init__(target, token)
        self._shared = self._channel  # like PlayerClient: a connection of its own
        options = [*channel_options(services=(SERVICE,)), OWN_CONNECTION]
        self._channel = grpc.aio.insecure_channel(target, options=options)
        self._commit = self._channel.unary_unary(METHOD)
        self._move = self._channel.unary_unary(MOVE)
        self._watch = self._channel.unary_stream(WATCH)

    async def close(self) -> None:
        await self._shared.close()
        await super().close()

    async def commit(self, row: bytes, *, wait_for_ready: bool = False) -> bytes:
        reply: bytes = await self._commit(
            row, metadata=self.metadata, timeout=30.0, wait_for_ready=wait_for_ready
        )
        return reply

    async def connect(self) -> None:
        """Open this client's connection now (gRPC would open it on the first call)."""
        await self._channel.channel_ready()

    async def move(self, table: str, seat: int, version: int, row: bytes) -> bytes:
        """The second mode's unary call: commit `row`, push to every stream of `table`."""
        reply: bytes = await self._move(
            move_request(table, seat, version, row), metadata=self.metadata, timeout=30.0
        )
        return reply

    async def watch(self, table: str, seats: int) -> AsyncIterator[tuple[int, int]]:
        """(version, seat to move next) of every push to this stream of `table`."""
        call = self._watch(f"{table} {seats}".encode(), metadata=self.metadata)
        try:
            async for message in call:
                yield parse_push(message)
        finally:
            call.cancel()


@dataclass
class FloorProcess:
    """`tests/bench/floor.py --serve` on a free port, stopped with SIGTERM."""

    database_url: str
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None, "the floor is not running"
        return self.process.pid

    async def start(self, token: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
        env.update(KOZYR_DATABASE_URL=self.database_url, KOZYR_GRPC_PORT=str(self.port))
        self.process = subprocess.Popen(  # noqa: ASYNC220 — spawning does not block
            [sys.executable, str(Path(__file__)), "--serve"], env=env
        )
        async with asyncio.timeout(START_TIMEOUT), FloorClient(self.target, token) as client:
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the floor exited with {self.process.returncode}")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await client.commit(payload(0, 0), wait_for_ready=True)
                    return
                await asyncio.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.process)


@dataclass(frozen=True)
class FloorResult:
    callers: int
    calls: int
    seconds: float
    latencies: Sequence[float]
    server_cpu: float
    """CPU seconds the floor process used during the run."""

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.server_cpu / max(self.calls, 1)


async def run_floor(
    floor: FloorProcess, tokens: Sequence[str], calls_each: int, cpu_seconds: Callable[[int], float]
) -> FloorResult:
    """`len(tokens)` callers in a closed loop, `calls_each` commits each, all at once;
    `cpu_seconds(pid)` reads a process's CPU time so far."""
    clients = [FloorClient(floor.target, token) for token in tokens]
    latencies: list[float] = []

    async def caller(index: int, client: FloorClient) -> None:
        for call in range(calls_each):
            row = payload(index, call)
            started = time.perf_counter()
            await client.commit(row)
            latencies.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(c.commit(payload(i, 0)) for i, c in enumerate(clients)))  # warm
        cpu_before = cpu_seconds(floor.pid)
        started = time.perf_counter()
        await asyncio.gather(*(caller(i, c) for i, c in enumerate(clients)))
        seconds = time.perf_counter() - started
        cpu = cpu_seconds(floor.pid) - cpu_before
    finally:
        for client in clients:
            await client.close()
    return FloorResult(len(clients), len(latencies), seconds, latencies, cpu)


def main() -> None:
    if sys.argv[1:] != ["--serve"]:
        sys.exit(__doc__)
    database_url = os.environ["KOZYR_DATABASE_URL"]
    asyncio.run(serve(database_url, int(os.environ["KOZYR_GRPC_PORT"])))


if __name__ == "__main__":
    main()
