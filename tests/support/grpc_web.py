"""A gRPC-Web client for the web edge's tests, written from the protocol, not from
`kozyr.webedge.framing`: a slip in the edge's framing cannot be mirrored here.

What a browser's gRPC-Web library does: POST one length-prefixed message frame, then
read message frames (flag 0x00) and the trailer frame (flag 0x80, `key: value` lines)
off the body, base64-decoding first for `application/grpc-web-text`.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import aiohttp
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from multidict import CIMultiDict

CONTENT_TYPE = "application/grpc-web+proto"
TEXT_CONTENT_TYPE = "application/grpc-web-text+proto"


def request_body(message: Message | bytes, *, text: bool = False) -> bytes:
    """One uncompressed message frame (base64 for grpc-web-text)."""
    payload = message if isinstance(message, bytes) else message.SerializeToString()
    body = b"\x00" + struct.pack(">I", len(payload)) + payload
    return base64.b64encode(body) if text else body


def headers(token: str | None = None, *, text: bool = False, **extra: str) -> dict[str, str]:
    """A call's request headers; `extra`'s underscores become dashes (accept_language)."""
    given = {"content-type": TEXT_CONTENT_TYPE if text else CONTENT_TYPE, "x-grpc-web": "1"}
    if token is not None:
        given["authorization"] = f"Bearer {token}"
    given.update({k.replace("_", "-"): v for k, v in extra.items()})
    return given


@dataclass
class Refusal:
    """The google.rpc.Status a trailer's `grpc-status-details-bin` carries, decoded."""

    code: int
    reason: str | None
    messages: dict[str, str]
    """Localized texts by locale, in the order sent (the caller's language first)."""


@dataclass
class Answer:
    """A whole gRPC-Web response: HTTP status and headers, messages, trailers."""

    http_status: int
    headers: Mapping[str, str]
    messages: list[bytes] = field(default_factory=list)
    trailers: dict[str, str] = field(default_factory=dict)

    @property
    def code(self) -> int:
        return int(self.trailers["grpc-status"])

    @property
    def message(self) -> str:
        return unquote(self.trailers.get("grpc-message", ""))

    def refusal(self) -> Refusal:
        raw = self.trailers["grpc-status-details-bin"]
        status = status_pb2.Status.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
        reason = None
        messages: dict[str, str] = {}
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
            elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
                localized = error_details_pb2.LocalizedMessage()
                detail.Unpack(localized)
                messages[localized.locale] = localized.message
        return Refusal(status.code, reason, messages)

    def parsed(self, cls: type[Any], index: int = 0) -> Any:
        return cls.FromString(self.messages[index])


def parse_trailers(block: bytes) -> dict[str, str]:
    lines = block.decode("ascii").split("\r\n")
    assert lines[-1] == "", f"the trailer block does not end with CRLF: {block!r}"
    pairs = (line.split(":", 1) for line in lines[:-1])
    return {key.strip().lower(): value.strip() for key, value in pairs}


class FrameReader:
    """Frames off a response body as they arrive (a stream's views one by one)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.text = response.headers.get("content-type", "").startswith(TEXT_CONTENT_TYPE)
        self._buffer = b""
        self._encoded = b""

    async def _fill(self, size: int) -> bool:
        while len(self._buffer) < size:
            chunk = await self.response.content.readany()
            if not chunk:
                assert not self._encoded, f"the body ends inside a base64 group: {self._encoded!r}"
                return False
            if self.text:
                # Each write of the edge is padded on its own: decode group by group,
                # as a browser's gRPC-Web library does, padding may end any group.
                self._encoded += chunk
                usable = len(self._encoded) - len(self._encoded) % 4
                groups = (self._encoded[i : i + 4] for i in range(0, usable, 4))
                self._buffer += b"".join(base64.b64decode(g, validate=True) for g in groups)
                self._encoded = self._encoded[usable:]
            else:
                self._buffer += chunk
        return True

    async def next(self) -> tuple[int, bytes] | None:
        """(flag, payload) of the next frame; None at the body's clean end."""
        if not await self._fill(5):
            assert not self._buffer, f"the body ends inside a frame prefix: {self._buffer!r}"
            return None
        flag, length = struct.unpack(">BI", self._buffer[:5])
        assert await self._fill(5 + length), "the body ends inside a frame"
        payload, self._buffer = self._buffer[5 : 5 + length], self._buffer[5 + length :]
        return flag, payload

    async def frames(self) -> AsyncIterator[tuple[int, bytes]]:
        while (found := await self.next()) is not None:
            yield found


async def read_answer(response: aiohttp.ClientResponse) -> Answer:
    """Read a whole response: messages, then exactly one trailer frame, then the end."""
    answer = Answer(response.status, CIMultiDict(response.headers))
    reader = FrameReader(response)
    async for flag, payload in reader.frames():
        assert not answer.trailers, "a frame follows the trailer frame"
        if flag == 0x80:
            answer.trailers = parse_trailers(payload)
        else:
            assert flag == 0x00, f"unexpected frame flag {flag:#x}"
            answer.messages.append(payload)
    assert answer.trailers, "the response has no trailer frame"
    return answer


async def call(
    session: aiohttp.ClientSession,
    url: str,
    method: str,
    message: Message | bytes,
    head: Mapping[str, str],
) -> Answer:
    """One whole call: POST `url/method`, read every frame."""
    text = head.get("content-type") == TEXT_CONTENT_TYPE
    async with session.post(
        f"{url}/{method}", data=request_body(message, text=text), headers=dict(head)
    ) as response:
        return await read_answer(response)
