"""What the gRPC edge costs per call: each interceptor stage alone, and the whole chain.

    .venv/bin/python tests/bench/bench_edge.py [--calls 20000] [--rounds 5]

The stages of `kozyr.runtime.interceptors` are composed exactly as `GrpcServer` composes
them (`wrap_handler`) around a handler that returns at once, and the composed behaviour
is called in a loop on one event loop with a stand-in servicer context (metadata with a
bearer token and a request id, as every player's call carries). No socket, no grpc core:
the figure is the Python work the edge adds to every unary call, and — for a stream — once
per stream (a streamed message pays nothing of the edge: `_drained` writes each one with
`context.write` inside all the stages). Logging writes to /dev/null at INFO, as deployed.

Per configuration: microseconds of CPU per call (the best of `--rounds` rounds, the
machine being shared), and the difference from the bare handler. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import grpc

from kozyr.runtime.auth import Role, TokenMinter, TokenVerifier
from kozyr.runtime.interceptors import (
    AuthInterceptor,
    AuthPolicy,
    CallInterceptor,
    ErrorInterceptor,
    LoggingInterceptor,
    call_metadata,
    wrap_handler,
)
from kozyr.runtime.limits import AdmissionInterceptor, DeadlineInterceptor
from kozyr.runtime.logging import configure_logging
from kozyr.runtime.tracing import TracingInterceptor

METHOD = "/kozyr.table.v1.TableService/SubmitAction"
SECRET = "a-development-secret-of-at-least-32-bytes"


class Context:
    """The few servicer-context calls the stages make, answered from fields."""

    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._metadata = tuple(metadata)

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        return self._metadata

    def code(self) -> grpc.StatusCode | None:
        return None

    def peer(self) -> str:
        return "ipv4:127.0.0.1:50000"

    def time_remaining(self) -> float | None:
        return 10.0

    async def write(self, message: Any) -> None:
        return None


async def _handler(request: Any, context: Any) -> Any:
    return request


def _interceptors(closing: asyncio.Event) -> dict[str, list[CallInterceptor]]:
    verifier = TokenVerifier(SECRET, "HS256")
    every = [
        TracingInterceptor(),
        LoggingInterceptor(),
        ErrorInterceptor(),
        AdmissionInterceptor(max_calls=1000, max_streams=1000, closing=closing),
        DeadlineInterceptor(),
        AuthInterceptor(AuthPolicy(), verifier),
    ]
    named = {type(stage).__name__: [stage] for stage in every}
    return {"bare handler": [], **named, "the whole edge": every}


def _behaviour(stages: Sequence[CallInterceptor]) -> Callable[[Any, Any], Any]:
    handler = grpc.unary_unary_rpc_method_handler(_handler)
    return wrap_handler(handler, METHOD, stages).unary_unary  # type: ignore[no-any-return]


async def _per_call(behaviour: Callable[[Any, Any], Any], context: Context, calls: int) -> float:
    """CPU seconds per call (process time: the loop runs nothing else)."""
    request = object()
    started = time.process_time()
    for _ in range(calls):
        await behaviour(request, context)
    return (time.process_time() - started) / calls


async def main(calls: int, rounds: int, sink: TextIO) -> None:
    configure_logging("INFO", "json", service="bench", stream=sink)
    token = TokenMinter(SECRET, "HS256").mint("player-1", Role.PLAYER)
    context = Context(call_metadata(token=token, request_id="bench-request-1"))
    configurations = _interceptors(asyncio.Event())
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, stages in configurations.items():
            behaviour = _behaviour(stages)
            await _per_call(behaviour, context, calls // 10)  # warm up (caches, series)
            seconds = await _per_call(behaviour, context, calls)
            best[name] = min(best.get(name, seconds), seconds)
    bare = best["bare handler"]
    print(f"{'configuration':<24} {'µs/call':>9} {'edge µs':>9}")
    for name, seconds in best.items():
        print(f"{name:<24} {seconds * 1e6:9.2f} {(seconds - bare) * 1e6:9.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    with open(os.devnull, "w") as devnull:
        asyncio.run(main(arguments.calls, arguments.rounds, devnull))
