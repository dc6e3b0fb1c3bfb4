"""A client process for the overload tests (run as a script, never imported).

    burst_client.py TARGET METHOD CALLS [--retry SERVICE]

Opens one channel to TARGET, fires CALLS unary calls of METHOD (empty request, any
response) at once, each with a 60 s deadline, and prints one JSON line: how many calls
ended with each status code ("OK" for a success). With --retry, the channel carries
the Python client's retry policy (kozyr.client.channel.channel_options) for SERVICE;
without it, retries are off and the server's raw answers are counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter

import grpc

from kozyr.client.channel import channel_options
from kozyr.client.table import TABLE_SERVICE

DEADLINE_SECONDS = 60.0


async def burst(target: str, method: str, calls: int, retry_service: str | None) -> Counter[str]:
    if retry_service is None:
        options = channel_options(retry=False, services=(TABLE_SERVICE,))
    else:
        options = channel_options(services=[retry_service])
    codes: Counter[str] = Counter()
    async with grpc.aio.insecure_channel(target, options=options) as channel:
        call = channel.unary_unary(method)
        await channel.channel_ready()
        results = await asyncio.gather(
            *(call(b"", timeout=DEADLINE_SECONDS) for _ in range(calls)), return_exceptions=True
        )
    for result in results:
        if isinstance(result, grpc.aio.AioRpcError):
            codes[result.code().name] += 1
        elif isinstance(result, BaseException):
            codes[type(result).__name__] += 1
        else:
            codes["OK"] += 1
    return codes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("method")
    parser.add_argument("calls", type=int)
    parser.add_argument("--retry", metavar="SERVICE")
    args = parser.parse_args()
    codes = asyncio.run(burst(args.target, args.method, args.calls, args.retry))
    print(json.dumps(dict(codes)), flush=True)


if __name__ == "__main__":
    main()
