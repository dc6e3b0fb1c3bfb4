"""One gRPC-Web call: check it, forward it as gRPC, write the answers back framed.

    POST /kozyr.table.v1.TableService/WatchTable
    content-type: application/grpc-web+proto      (or application/grpc-web-text+proto)
    authorization: Bearer …, accept-language: ro, x-request-id: …, grpc-timeout: 30S

The body's one message goes to the backend unchanged (identity serializers: the edge
never parses a message), with the caller's metadata and deadline; each answer is
written as a message frame and flushed at once (a watch's views reach the page as they
come), then the status, its message and its details (`grpc-status-details-bin`) and
the rest of the trailing metadata as the trailer frame. Every call, refused or not, is
answered HTTP 200 with a trailer frame — what gRPC-Web clients read a status from —
except a request that is not gRPC-Web at all (415), a method other than POST (405) and
an origin this edge does not serve (403): those are not gRPC calls.

A page that goes away (tab closed, connection dropped) cancels its backend call: the
HTTP server cancels the handler (`handler_cancellation`), and the handler cancels the
gRPC call on its way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import grpc
from aiohttp import web

from kozyr.runtime.errors import KozyrError, to_status
from kozyr.runtime.interceptors import LANGUAGE_KEY
from kozyr.runtime.limits import server_busy, shutting_down
from kozyr.runtime.logging import get_logger
from kozyr.texts import parse_lang
from kozyr.webedge import framing, metrics, routes, texts
from kozyr.webedge.cors import OriginPolicy
from kozyr.webedge.routes import Route, route

GRPC_WEB = "application/grpc-web"
GRPC_WEB_TEXT = "application/grpc-web-text"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest request message: gRPC's own default, which the services keep."""

_NOT_FORWARDED = frozenset(
    {
        "accept",
        "accept-encoding",
        "cache-control",
        "connection",
        "content-length",
        "content-type",
        "cookie",
        "dnt",
        "host",
        "keep-alive",
        "origin",
        "pragma",
        "priority",
        "referer",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "x-grpc-web",
        "x-user-agent",
    }
)
"""HTTP's own headers and the browser's, which mean nothing to a gRPC service (a cookie
least of all: kozyr authenticates with the bearer token alone)."""
_NOT_FORWARDED_PREFIXES = ("access-control-", "grpc-", "proxy-", "sec-")
"""The browser's `sec-*`, CORS's own, and gRPC's reserved `grpc-*` (the deadline is
passed as the call's own timeout)."""
_METADATA_KEY = re.compile(r"^[0-9a-z_.-]+$")
_NOT_ANSWERED = frozenset({"content-type", "content-length", "connection", "transfer-encoding"})

_log = get_logger("kozyr.webedge")


class Gate:
    """Counts the calls of one kind in progress and refuses those over its limit (the
    services' admission, kozyr.runtime.limits, does the same behind the edge)."""

    def __init__(self, limit: int, kind: str, on_change: Callable[[], None]) -> None:
        self.limit = limit
        self.open = 0
        self._gauge = metrics.WEB_OPEN.labels(kind)
        self._on_change = on_change

    @contextlib.contextmanager
    def admit(self) -> Iterator[None]:
        if self.open >= self.limit:
            raise server_busy()
        self.open += 1
        self._gauge.inc()
        self._on_change()
        try:
            yield
        finally:
            self.open -= 1
            self._gauge.dec()
            self._on_change()


class Proxy:
    """The edge's HTTP handlers over one channel per backend."""

    def __init__(
        self,
        targets: dict[str, str],
        origins: OriginPolicy,
        *,
        max_calls: int,
        max_streams: int,
        credentials: grpc.ChannelCredentials | None = None,
        channel_options: Sequence[tuple[str, object]] = (),
    ) -> None:
        self.targets = targets
        self.origins = origins
        self._idle = asyncio.Event()
        self._idle.set()
        self.calls = Gate(max_calls, "unary", self._check_idle)
        self.streams = Gate(max_streams, "stream", self._check_idle)
        self.closing = asyncio.Event()
        """Set once shutdown begins: new calls are refused, open ones ended UNAVAILABLE."""
        self._open: dict[grpc.aio.UnaryStreamCall, bool] = {}
        """The backend calls in progress, each with whether it is a stream."""
        self._channels = {
            name: (
                grpc.aio.insecure_channel(target, options=list(channel_options))
                if credentials is None
                else grpc.aio.secure_channel(target, credentials, options=list(channel_options))
            )
            for name, target in targets.items()
        }

    @property
    def in_progress(self) -> int:
        """Calls and streams being forwarded now."""
        return self.calls.open + self.streams.open

    def _check_idle(self) -> None:
        if self.in_progress == 0:
            self._idle.set()
        else:
            self._idle.clear()

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/healthz", self.healthz),
            web.options("/{path:.*}", self.preflight),
            web.post("/{path:.*}", self.call),
        ]

    async def healthz(self, _request: web.Request) -> web.Response:
        """Liveness for probes: 200 while the edge takes calls, 503 once it stops."""
        if self.closing.is_set():
            return web.Response(status=503, text="shutting down\n")
        return web.Response(text="ok\n")

    async def preflight(self, request: web.Request) -> web.Response:
        """CORS preflight: the allowed methods and headers to an allowed origin; 403
        without any CORS header to another (the browser then refuses the call)."""
        origin = request.headers.get("Origin")
        if origin is None or not self.origins.allows(origin):
            return _origin_refused(origin)
        return web.Response(status=204, headers=self.origins.preflight_headers(origin))

    async def call(self, request: web.Request) -> web.StreamResponse:
        """One gRPC-Web call, refused or forwarded (module docstring)."""
        origin = request.headers.get("Origin")
        if origin is not None and not self.origins.allows(origin):
            return _origin_refused(origin)
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in _CONTENT_TYPES:
            return web.Response(  # with CORS headers: the page may read why
                status=415,
                text=f"expected {GRPC_WEB}+proto or {GRPC_WEB_TEXT}+proto, got {content_type!r}\n",
                headers=self.origins.response_headers(origin) if origin is not None else None,
            )
        answer = _Answer(request, origin, self.origins, content_type.startswith(GRPC_WEB_TEXT))
        language = parse_lang(request.headers.get(LANGUAGE_KEY))
        try:
            prepared = await self._prepare(request, answer.text)
        except KozyrError as error:
            _log.info("gRPC-Web call refused", path=request.path, reason=error.reason)
            return await answer.status(to_status(error, language=language))
        return await self._forward(answer, prepared)

    async def _prepare(self, request: web.Request, text: bool) -> Forwarded:
        """What to forward: the route, the message, the metadata and the deadline;
        KozyrError (with nothing sent anywhere) when any of them is unusable."""
        if self.closing.is_set():
            raise shutting_down()
        found = route(request.path, self.targets)
        if found is None:
            raise texts.unknown_service(request.path)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise texts.message_too_large(MAX_MESSAGE_BYTES) from None
        try:
            message = framing.single_message(framing.decode_text(body) if text else body)
        except framing.FramingError as error:
            raise texts.bad_frame(str(error)) from None
        if len(message) > MAX_MESSAGE_BYTES:
            raise texts.message_too_large(MAX_MESSAGE_BYTES)
        metadata = forwarded_metadata(request.headers.items())
        return Forwarded(found, message, metadata, _deadline_seconds(request))

    async def _forward(self, answer: _Answer, forwarded: Forwarded) -> web.StreamResponse:
        gate = self.streams if forwarded.route.streaming else self.calls
        try:
            with gate.admit():
                return await self._relay(answer, forwarded)
        except KozyrError as error:  # over the limit
            language = parse_lang(answer.request.headers.get(LANGUAGE_KEY))
            return await answer.status(to_status(error, language=language))

    async def _relay(self, answer: _Answer, forwarded: Forwarded) -> web.StreamResponse:
        """Call the backend and copy its answers out as they come; the backend call is
        cancelled whenever this ends early (the page went away, the edge stops)."""
        method = self._channels[forwarded.route.backend].unary_stream(forwarded.route.path)
        call = method(
            forwarded.message, metadata=forwarded.metadata, timeout=forwarded.deadline_seconds
        )
        self._open[call] = forwarded.route.streaming
        try:
            answer.headers(await _initial_metadata(call))
            while (reply := await _next_reply(call)) is not grpc.aio.EOF:
                await answer.message(reply)
            return await answer.status(await self._outcome(call))
        except asyncio.CancelledError:  # the page went away: the server cancelled us
            metrics.observe_call(answer.service, grpc.StatusCode.CANCELLED.name)
            raise
        except ConnectionError:  # the page went away as an answer was written
            metrics.observe_call(answer.service, grpc.StatusCode.CANCELLED.name)
            return answer.response
        finally:
            self._open.pop(call, None)
            if not call.done():
                call.cancel()

    async def _outcome(self, call: grpc.aio.UnaryStreamCall) -> grpc.Status:
        """The call's status as the page should see it: a call the edge's shutdown
        cancelled is UNAVAILABLE (SHUTTING_DOWN), which clients retry elsewhere."""
        code = await call.code()
        if code == grpc.StatusCode.CANCELLED and self.closing.is_set():
            return to_status(shutting_down())
        return _Status(code, await call.details() or "", tuple(await call.trailing_metadata()))

    async def close(self, grace: float) -> None:
        """Refuse new calls; end the open streams at once (UNAVAILABLE: a watch would
        never end by itself) and give unary calls up to `grace` seconds to finish (a
        move in flight is answered, not cut), then cancel what is left and close the
        channels."""
        self.closing.set()
        for call in [call for call, streaming in self._open.items() if streaming]:
            call.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self._idle.wait()
        for call in list(self._open):
            call.cancel()
        for channel in self._channels.values():
            await channel.close()


async def _initial_metadata(call: grpc.aio.UnaryStreamCall) -> Any:
    """The backend's initial metadata (sent with its first answer, or at its end); none
    when the edge's shutdown cancelled the call first (`_next_reply`)."""
    try:
        return await call.initial_metadata()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return None


async def _next_reply(call: grpc.aio.UnaryStreamCall) -> Any:
    """The backend's next answer; EOF once it has ended — with its status, or cancelled
    by the edge's shutdown (`Proxy.close`). When it is this handler that is cancelled
    (the page went away), that goes on up."""
    try:
        return await call.read()
    except grpc.aio.AioRpcError:
        return grpc.aio.EOF
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        return grpc.aio.EOF


@dataclass(frozen=True)
class Forwarded:
    """One call as the backend gets it."""

    route: Route
    message: bytes
    metadata: list[tuple[str, str | bytes]]
    deadline_seconds: float | None


class _Status(NamedTuple):
    """A status read off a finished backend call, in the shape of `grpc.Status`."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


_CONTENT_TYPES = frozenset({GRPC_WEB, f"{GRPC_WEB}+proto", GRPC_WEB_TEXT, f"{GRPC_WEB_TEXT}+proto"})


class _Answer:
    """The HTTP response of one call: headers once, then frames, each flushed."""

    def __init__(
        self, request: web.Request, origin: str | None, origins: OriginPolicy, text: bool
    ) -> None:
        self.request = request
        self.text = text
        self.service = routes.service_name(request.path)
        content_type = f"{GRPC_WEB_TEXT}+proto" if text else f"{GRPC_WEB}+proto"
        self.response = web.StreamResponse(headers={"Content-Type": content_type})
        if origin is not None:
            self.response.headers.update(origins.response_headers(origin))

    def headers(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> None:
        """The backend's initial metadata (the echoed x-request-id) as headers."""
        for key, value in metadata or ():
            if key.lower() not in _NOT_ANSWERED:
                self.response.headers.add(key, _text(value))

    async def _write(self, chunk: bytes) -> None:
        if not self.response.prepared:
            await self.response.prepare(self.request)
        await self.response.write(framing.encode_text(chunk) if self.text else chunk)

    async def message(self, payload: bytes) -> None:
        await self._write(framing.frame(payload))

    async def status(self, status: grpc.Status) -> web.StreamResponse:
        """The trailer frame, and the end of the response."""
        trailers = [
            ("grpc-status", str(status.code.value[0])),
            ("grpc-message", framing.encode_message_text(status.details or "")),
            *((k, _text(v)) for k, v in status.trailing_metadata or () if not _reserved(k)),
        ]
        await self._write(framing.trailer_frame(trailers))
        await self.response.write_eof()
        metrics.observe_call(self.service, status.code.name)
        return self.response


def _reserved(key: str) -> bool:
    return key.lower() in ("grpc-status", "grpc-message")


def _text(value: str | bytes) -> str:
    """A metadata value as an HTTP/1 header value (`-bin` ones base64)."""
    return framing.encode_binary(value) if isinstance(value, bytes) else value


def _origin_refused(origin: str | None) -> web.Response:
    metrics.WEB_ORIGIN_REFUSED.inc()
    _log.info("gRPC-Web origin refused", origin=origin)
    return web.Response(status=403, text=f"origin {origin!r} may not call this edge\n")


def _deadline_seconds(request: web.Request) -> float | None:
    """The call's deadline from `grpc-timeout`, in seconds; None without one."""
    value = request.headers.get("grpc-timeout")
    if value is None:
        return None
    try:
        return framing.parse_timeout(value.strip())
    except ValueError as error:
        raise texts.bad_header("grpc-timeout", str(error)) from None


def forwarded_metadata(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str | bytes]]:
    """The request headers a backend gets as gRPC metadata: all but HTTP's and the
    browser's own (`_NOT_FORWARDED`); `-bin` values decoded from base64. A header that
    gRPC cannot carry is refused (BAD_HEADER) rather than dropped unseen."""
    metadata: list[tuple[str, str | bytes]] = []
    for raw_key, value in headers:
        key = raw_key.lower()
        if key in _NOT_FORWARDED or key.startswith(_NOT_FORWARDED_PREFIXES):
            continue
        if not _METADATA_KEY.match(key):
            raise texts.bad_header(key[:100], "gRPC metadata keys are 0-9 a-z _ . - only")
        if key.endswith("-bin"):
            try:
                metadata.append((key, framing.decode_binary(value)))
            except ValueError as error:
                raise texts.bad_header(key, str(error)) from None
        elif not (value.isascii() and value.isprintable()):
            raise texts.bad_header(key, "gRPC metadata values are printable ASCII only")
        else:
            metadata.append((key, value))
    return metadata
