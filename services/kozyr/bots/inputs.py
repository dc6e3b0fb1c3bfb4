"""Tests only: a record of everything the bots process receives.

"No peeking" is a property of the bots' inputs, so a test checks the inputs themselves:
with `KOZYR_BOTS_INPUT_LOG` set, every public event the process is handed and every
answer (or refusal) of the table service to it is appended to that file, one JSON line
each, exactly as received (the serialized message, base64). The leak checker then reads
it against the admin's history (tests/e2e/bots). Unset in production: nothing is kept.

    {"kind": "event", "subject": …, "type": "kozyr.table.v1.PublicTableEvent", "data": …}
    {"kind": "answer", "method": …, "type": "kozyr.table.v1.GetTableResponse", "data": …,
     "request_type": "kozyr.table.v1.GetTableRequest", "request": …}
    {"kind": "refusal", "method": …, "code": "PERMISSION_DENIED", "reason": …, "texts": […],
     "request_type": …, "request": …}

(the request says which table and seat an answer is about.)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from nats.aio.msg import Msg

from kozyr.api.table.v1 import events_pb2
from kozyr.runtime.errors import error_details

PUBLIC_EVENT = events_pb2.PublicTableEvent.DESCRIPTOR.full_name


class InputLog:
    """Appends one JSON line per input to `path` (line-buffered: a SIGKILL loses none)."""

    def __init__(self, path: str | Path) -> None:
        # Open for the process's life, closed at shutdown (`close`).
        self._file = Path(path).open("a", buffering=1, encoding="utf-8")  # noqa: SIM115

    def write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry) + "\n")

    def events(self, handler: Callable[[Msg], Awaitable[None]]) -> Callable[[Msg], Awaitable[None]]:
        """`handler`, recording each message it is handed first."""

        async def recorded(message: Msg) -> None:
            self.write(
                {"kind": "event", "subject": message.subject, "type": PUBLIC_EVENT,
                 "data": _b64(message.data)}
            )  # fmt: skip
            await handler(message)

        return recorded

    def interceptor(self) -> grpc.aio.UnaryUnaryClientInterceptor:
        """A client interceptor recording every unary answer and refusal."""
        return _Recorder(self)

    def close(self) -> None:
        self._file.close()


class _Recorder(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, log: InputLog) -> None:
        self._log = log

    async def intercept_unary_unary(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        call = await continuation(details, request)
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        asked = {
            "method": method,
            "request_type": request.DESCRIPTOR.full_name,
            "request": _b64(request.SerializeToString()),
        }
        try:
            response = await call
        except grpc.aio.AioRpcError as error:
            found = error_details(error)
            self._log.write(
                {"kind": "refusal", **asked, "code": found.code.name, "reason": found.reason,
                 "texts": [found.message, *found.messages.values()]}
            )  # fmt: skip
            raise
        self._log.write(
            {"kind": "answer", **asked, "type": response.DESCRIPTOR.full_name,
             "data": _b64(response.SerializeToString())}
        )  # fmt: skip
        return call


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
