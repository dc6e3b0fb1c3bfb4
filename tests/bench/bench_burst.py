"""A burst of new calls at once: what status codes does the table service answer?

    .venv/bin/python tests/bench/bench_burst.py [--processes 3] [--calls 800]
                                                [--rounds 3] [--retry] [--deadline 30]

Issue 8, defect 5: thousands of new calls at once from a few client processes used to
be answered CANCELLED before any handler ran (and some connections were refused). An
overloaded server must answer codes clients retry — UNAVAILABLE or RESOURCE_EXHAUSTED —
and the Python client's retry policy (`kozyr.client.table.RETRY_SERVICE_CONFIG`) must
turn those into successes.

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else kozyr.infra
starts embedded ones. The table service runs as its own process (`python -m
kozyr.table`, as deployed). One table is created; then `--processes` client processes
each open one channel and fire `--calls` GetTable calls at once, `--rounds` times
(`--max-calls` lowers the service's KOZYR_GRPC_MAX_CONCURRENT_CALLS).
Without `--retry` the channels carry no retry policy, so the raw codes the server
answered are counted; with it, the client's policy is on and only what survives it is
counted. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client import TableClient
from kozyr.client.channel import channel_options
from kozyr.client.table import TABLE_SERVICE
from kozyr.eventstore import migrate
from kozyr.runtime.auth import Role

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.bench.bench_table import ServiceProcess, scratch_database, servers, token


@dataclass
class LimitedService(ServiceProcess):
    """The service process with KOZYR_GRPC_MAX_CONCURRENT_CALLS set (None: the default)."""

    max_calls: int | None = None

    def environment(self) -> dict[str, str]:
        env = super().environment()
        if self.max_calls is not None:
            env["KOZYR_GRPC_MAX_CONCURRENT_CALLS"] = str(self.max_calls)
        return env


@dataclass(frozen=True)
class Burst:
    target: str
    table_id: str
    calls: int
    rounds: int
    retry: bool
    deadline: float


def client_process(burst: Burst) -> tuple[Counter[str], list[float]]:
    """One client process: `rounds` bursts of `calls` concurrent GetTable calls."""
    return asyncio.run(_client(burst))


async def _client(burst: Burst) -> tuple[Counter[str], list[float]]:
    options = channel_options(retry=burst.retry, services=(TABLE_SERVICE,))
    codes: Counter[str] = Counter()
    seconds: list[float] = []
    metadata = (("authorization", f"Bearer {token('burst-player', Role.PLAYER)}"),)
    async with grpc.aio.insecure_channel(burst.target, options=options) as channel:
        stub = pb_grpc.TableServiceStub(channel)
        request = pb.GetTableRequest(table_id=burst.table_id)
        for _ in range(burst.rounds):
            started = time.perf_counter()
            results = await asyncio.gather(
                *(
                    stub.GetTable(request, metadata=metadata, timeout=burst.deadline)
                    for _ in range(burst.calls)
                ),
                return_exceptions=True,
            )
            seconds.append(time.perf_counter() - started)
            for result in results:
                if isinstance(result, grpc.aio.AioRpcError):
                    codes[result.code().name] += 1
                elif isinstance(result, BaseException):
                    codes[type(result).__name__] += 1
                else:
                    codes["OK"] += 1
    return codes, seconds


async def open_table(target: str) -> str:
    async with TableClient(target, token("burst-service", Role.SERVICE)) as client:
        created = await client.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT, ["p1", "p2", "p3"], request_id=uuid.uuid4().hex
        )
    return created.table_id


async def prepare(server_url: str, nats_url: str, args: argparse.Namespace) -> None:
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        service = LimitedService(database_url, nats_url, max_calls=args.max_calls)
        await service.start()
        try:
            table_id = await open_table(service.target)
            burst = Burst(
                service.target, table_id, args.calls, args.rounds, args.retry, args.deadline
            )
            await asyncio.to_thread(fire, burst, args.processes)
        finally:
            service.stop()


def fire(burst: Burst, processes: int) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        outcomes = pool.map(client_process, [burst] * processes)
    report(burst, processes, outcomes)


def report(
    burst: Burst, processes: int, outcomes: Sequence[tuple[Counter[str], list[float]]]
) -> None:
    codes: Counter[str] = Counter()
    for counted, _ in outcomes:
        codes.update(counted)
    total = sum(codes.values())
    worst = max(max(seconds) for _, seconds in outcomes)
    policy = "client retry policy on" if burst.retry else "no retry policy"
    print(f"{processes} processes x {burst.calls} calls x {burst.rounds} rounds ({policy})")
    for code, count in codes.most_common():
        print(f"  {code:20} {count:6}  {100 * count / total:5.1f} %")
    print(f"  slowest burst: {worst:.2f} s")


def main() -> None:
    args = parse_arguments()
    with servers(durable=False) as (server_url, nats_url):
        asyncio.run(prepare(server_url, nats_url, args))


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--calls", type=int, default=800, help="concurrent calls per process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--retry", action="store_true", help="the client's retry policy on")
    parser.add_argument("--deadline", type=float, default=30.0, help="per-call deadline (s)")
    parser.add_argument("--max-calls", type=int, help="the service's concurrent-call limit")
    return parser.parse_args()


if __name__ == "__main__":
    main()
