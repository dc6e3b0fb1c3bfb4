"""gRPC-Web's wire format: length-prefixed frames, the trailer frame, `grpc-timeout`.

A gRPC-Web body is a run of frames: one flag byte (0x00 a message, 0x80 the trailers;
bit 0x01 a compressed message), a 4-byte big-endian length, then that many bytes. The
`-text` variants carry the same bytes base64-encoded. Pure functions, no I/O: the
proxy (`kozyr.webedge.proxy`) does the reading and writing.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Iterable
from urllib.parse import quote

MESSAGE_FLAG = 0x00
COMPRESSED_FLAG = 0x01
TRAILER_FLAG = 0x80
HEADER = struct.Struct(">BI")
"""A frame's prefix: its flag byte and the length of what follows."""

_TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}


class FramingError(ValueError):
    """A request body that is not one well-formed gRPC-Web message frame."""


def frame(payload: bytes, flag: int = MESSAGE_FLAG) -> bytes:
    """One frame: flag, length, payload."""
    return HEADER.pack(flag, len(payload)) + payload


def trailer_frame(trailers: Iterable[tuple[str, str]]) -> bytes:
    """The last frame of a response: the status and trailing metadata as HTTP/1 header
    lines (`key: value\\r\\n`), keys in lower case as gRPC-Web clients expect."""
    block = "".join(f"{key.lower()}: {value}\r\n" for key, value in trailers)
    return frame(block.encode("ascii"), TRAILER_FLAG)


def single_message(body: bytes) -> bytes:
    """The one message a unary or server-streaming request carries.

    gRPC-Web has no client streaming: a request is exactly one uncompressed message
    frame (an empty message is a frame of length 0). Anything else — a short prefix, a
    length past the end, a trailer or compressed frame, bytes after the frame — is a
    FramingError saying what is wrong, and the call goes no further.
    """
    if len(body) < HEADER.size:
        raise FramingError(
            f"the body has {len(body)} bytes: a gRPC-Web message frame needs at least "
            f"{HEADER.size} (flag and length)"
        )
    flag, length = HEADER.unpack_from(body)
    if flag & TRAILER_FLAG:
        raise FramingError("the request's first frame is a trailer frame, not a message")
    if flag & COMPRESSED_FLAG:
        raise FramingError("compressed messages are not accepted: send them uncompressed")
    if flag != MESSAGE_FLAG:
        raise FramingError(f"unknown frame flag 0x{flag:02x}")
    end = HEADER.size + length
    if len(body) < end:
        raise FramingError(f"the frame announces {length} bytes but {len(body) - 5} follow")
    if len(body) > end:
        raise FramingError(
            f"{len(body) - end} bytes follow the message: a request carries one message"
        )
    return body[HEADER.size : end]


def decode_text(body: bytes) -> bytes:
    """The bytes of a `grpc-web-text` body (base64, padded or not)."""
    compact = b"".join(body.split())
    try:
        return base64.b64decode(compact + b"=" * (-len(compact) % 4), validate=True)
    except binascii.Error:
        raise FramingError("a grpc-web-text body must be base64") from None


def encode_text(chunk: bytes) -> bytes:
    """A chunk of a `grpc-web-text` response: each write base64-encoded (padded) on its
    own, so a message reaches the browser as soon as it is written."""
    return base64.b64encode(chunk)


def parse_timeout(value: str) -> float:
    """`grpc-timeout` (1 to 8 digits, then a unit H M S m u n) in seconds."""
    digits, unit = value[:-1], value[-1:]
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 8 or unit not in _TIMEOUT_UNITS:
        raise ValueError(f"grpc-timeout {value!r} is not 1-8 digits followed by one of H M S m u n")
    return int(digits) * _TIMEOUT_UNITS[unit]


def encode_message_text(message: str) -> str:
    """`grpc-message` as gRPC sends it: UTF-8, percent-encoded outside printable ASCII
    (and `%` itself), so that a Romanian or Italian text survives an HTTP/1 line."""
    return quote(message, safe=" !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~")


def encode_binary(value: bytes) -> str:
    """A `-bin` metadata value as text: base64 without padding (what gRPC emits)."""
    return base64.b64encode(value).decode("ascii").rstrip("=")


def decode_binary(value: str) -> bytes:
    """A `-bin` header's value (base64, padded or not; several joined by commas)."""
    parts = [p.strip() for p in value.split(",")]
    try:
        return b"".join(base64.b64decode(p + "=" * (-len(p) % 4), validate=True) for p in parts)
    except binascii.Error:
        raise ValueError("a -bin header's value must be base64") from None
