"""The gRPC edge: server interceptors for logging/metrics, error mapping and authentication.

Each interceptor is one stage of every call (unary or streaming, either direction),
`stage(inner, method, request, context)`. `GrpcServer` composes them, outermost first,
into one `Edge`:

    TracingInterceptor   a server span, child of the caller's (kozyr.runtime.tracing)
    LoggingInterceptor   binds request_id/method, writes one line per call, records metrics
    ErrorInterceptor     KozyrError → its status + ErrorInfo; a store (or bus) outage →
                         UNAVAILABLE (kozyr.runtime.outages); anything else → INTERNAL
    Admission, Deadline  load, shutdown and the caller's deadline (kozyr.runtime.limits)
    AuthInterceptor      bearer JWT → Principal (contextvar), role check per method
    (a service's own)    whatever a service adds, innermost

so an authentication failure is mapped like any other typed error and still logged.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

import grpc

from kozyr.api.common.v1 import language_pb2
from kozyr.runtime.auth import (
    ALL_ROLES,
    AUTHORIZATION_KEY,
    Principal,
    Role,
    TokenVerifier,
    bearer_token,
    enter_principal,
    leave_principal,
    role_not_allowed,
)
from kozyr.runtime.errors import (
    InvalidArgument,
    KozyrError,
    Unavailable,
    internal_error,
    to_status,
)
from kozyr.runtime.logging import (
    bind_log_context,
    get_logger,
    pop_log_context,
    push_log_context,
)
from kozyr.runtime.metrics import observe_call
from kozyr.runtime.outages import dependency_outage
from kozyr.texts import Lang, Texts, parse_lang

REQUEST_ID_KEY = "x-request-id"
"""Metadata key of the caller's correlation id (generated when absent or unusable)."""
MAX_REQUEST_ID = 128
_USABLE_REQUEST_ID = re.compile(rf"[\x21-\x7e]{{1,{MAX_REQUEST_ID}}}")
"""A correlation id is copied into the metadata of every event a call appends and into
every log line: like a request_id field, 1 to 128 printable ASCII characters."""
LANGUAGE_KEY = "accept-language"
"""Metadata key choosing the language listed first in error details."""

HEALTH_SERVICE = "grpc.health.v1.Health"
REFLECTION_SERVICES = (
    "grpc.reflection.v1alpha.ServerReflection",
    "grpc.reflection.v1.ServerReflection",
)
ALWAYS_PUBLIC_SERVICES = frozenset({HEALTH_SERVICE, *REFLECTION_SERVICES})
"""Probes and tooling must work without a token."""

QUIET_METHODS = frozenset({f"/{HEALTH_SERVICE}/Check", f"/{HEALTH_SERVICE}/Watch"})
"""Logged at debug level: orchestrators probe health every few seconds."""

_SERVER_FAULTS = frozenset(
    {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}
)

Metadata = Sequence[tuple[str, str | bytes]]

_log = get_logger("kozyr.grpc")
_REQUEST_ID: ContextVar[str | None] = ContextVar("kozyr_request_id", default=None)


_PREFERRED_LANGUAGE: ContextVar[str | None] = ContextVar("kozyr_language", default=None)


def prefer_language(language: str | None) -> None:
    """Let a handler choose the language of its errors from a request field.

    It wins over the `accept-language` metadata for the rest of this call.
    """
    _PREFERRED_LANGUAGE.set(parse_lang(language) if language else None)


_REQUEST_LANGUAGES: Mapping[int, Lang] = {
    language_pb2.LANGUAGE_EN: Lang.EN,
    language_pb2.LANGUAGE_RO: Lang.RO,
    language_pb2.LANGUAGE_IT: Lang.IT,
}


def prefer_request_language(code: int) -> None:
    """`prefer_language` for a request's `language` field (`kozyr.common.v1.Language`);
    LANGUAGE_UNSPECIFIED (or a value newer than this server) leaves `accept-language`."""
    prefer_language(_REQUEST_LANGUAGES.get(code))


def current_request_id() -> str | None:
    """The `x-request-id` of the call being handled (None outside a call)."""
    return _REQUEST_ID.get()


def call_metadata(
    *, token: str | None = None, request_id: str | None = None, language: str | None = None
) -> tuple[tuple[str, str], ...]:
    """Client-side call metadata in the names this edge reads: token, request id, language."""
    metadata: list[tuple[str, str]] = []
    if token is not None:
        metadata.append((AUTHORIZATION_KEY, f"Bearer {token}"))
    if request_id is not None:
        metadata.append((REQUEST_ID_KEY, request_id))
    if language is not None:
        metadata.append((LANGUAGE_KEY, language))
    return tuple(metadata)


def metadata_value(metadata: Metadata | None, key: str) -> str | None:
    """The first value of a (text) metadata key, None when absent."""
    for k, v in metadata or ():
        if k == key:
            return v.decode() if isinstance(v, bytes) else v
    return None


def call_request_id(given: str | None) -> tuple[str, bool]:
    """The correlation id of a call, and whether the caller's own was replaced.

    The caller's `x-request-id` is kept when it is 1 to 128 printable ASCII characters
    without spaces; an absent one is made up; any other (up to the transport's metadata
    limit, 16 KiB) is replaced by a made-up one rather than stored with every event.
    """
    if given is not None and _USABLE_REQUEST_ID.fullmatch(given):
        return given, False
    return uuid.uuid4().hex, given is not None


def service_of(method: str) -> str:
    """ "/pkg.Service/Method" → "pkg.Service"."""
    return method.lstrip("/").partition("/")[0]


# --------------------------------------------------------------------------- wrapping


Inner = Callable[[Any, Any], Awaitable[Any]]
"""A call from one stage inwards: (request, context) → the response (a stream's
handler writes its responses with `context.write` and returns None)."""
Stage = Callable[[Inner, str, Any, Any], Awaitable[Any]]
"""One interceptor's part of a call: (inner, method, request, context) → what `inner`
returns, with whatever it does before, after and around it."""


class CallInterceptor:
    """Base: one stage of every call, `stage(inner, method, request, context)`.

    A stage is a plain coroutine with its own try/finally, not a context manager: the
    edge runs every call through all of them, and context managers (five frames and an
    object each) were a good part of what a call cost. `GrpcServer` composes the stages
    of all its interceptors into one grpc interceptor, `Edge`.
    """

    def stage_for(self, method: str, handler: Any) -> Stage | None:
        """This interceptor's stage for `method`'s calls, None when it takes no part in
        them; asked once per method (the handler tells unary from streaming)."""
        return self.stage

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        raise NotImplementedError


class Edge(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Many interceptors' stages as one interceptor, outermost first, composed once per
    method rather than on every call.

    grpc.aio asks each interceptor for a handler on every call; seven interceptors made
    seven new handlers and seven nested wrappers per call. Here a method's handler is
    built on its first call and kept (methods are few and fixed; an unknown method has
    no handler and grpc answers UNIMPLEMENTED).
    """

    def __init__(self, interceptors: Sequence[CallInterceptor]) -> None:
        self._interceptors = tuple(interceptors)
        self._handlers: dict[str, tuple[Any, Any]] = {}

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[Any]], details: Any
    ) -> Any:
        handler = await continuation(details)
        if handler is None:
            return None
        method = details.method
        known = self._handlers.get(method)
        if known is None or known[0] is not handler:
            known = self._handlers[method] = (
                handler,
                wrap_handler(handler, method, self._interceptors),
            )
        return known[1]


@dataclass(frozen=True, slots=True)
class Undecodable:
    """What a request that does not parse becomes, instead of an exception inside grpc.

    grpc.aio turns a deserializer's exception into UNKNOWN ("Unexpected <class
    DecodeError>"), outside every interceptor; as a value it reaches the stages, and the
    error stage refuses it with INVALID_ARGUMENT like any other bad input.
    """

    error: str


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None or getattr(deserializer, "tolerant", False):
        return deserializer

    def deserialize(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except Exception as error:  # DecodeError, or whatever a custom deserializer raises
            return Undecodable(type(error).__name__)

    deserialize.tolerant = True  # type: ignore[attr-defined]
    return deserialize


def undecodable_request() -> InvalidArgument:
    return InvalidArgument(
        "MALFORMED_REQUEST",
        Texts(
            en="The request could not be decoded.",
            ro="Cererea nu a putut fi decodificată.",
            it="Non è stato possibile decodificare la richiesta.",
        ),
    )


def wrap_handler(handler: Any, method: str, interceptors: Sequence[CallInterceptor]) -> Any:
    """A copy of an RpcMethodHandler whose behaviour runs through the interceptors'
    stages for `method`, the first outermost.

    (Client-streaming requests are not checked for decoding: no kozyr service has one.)
    """
    call: Inner = _single_response(handler) if not handler.response_streaming else _drained(handler)
    for interceptor in reversed(interceptors):
        stage = interceptor.stage_for(method, handler)
        if stage is not None:
            call = functools.partial(stage, call, method)
    kwargs = {
        "request_deserializer": _tolerant(handler.request_deserializer),
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(call, **kwargs)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(call, **kwargs)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(call, **kwargs)
    return grpc.stream_stream_rpc_method_handler(call, **kwargs)


def _single_response(handler: Any) -> Inner:
    behavior = handler.unary_unary or handler.stream_unary
    if inspect.iscoroutinefunction(behavior):
        return cast(Inner, behavior)

    async def call(request: Any, context: Any) -> Any:
        result = behavior(request, context)
        return await result if inspect.isawaitable(result) else result

    return call


def _drained(handler: Any) -> Inner:
    """A streaming handler as one coroutine that writes with `context.write`.

    An async-generator handler is drained here, in the call's own task, rather than
    handed to grpc as a generator: when a client cancels a stream, grpc abandons a
    generator and asyncio finalises it later in another task, after the call is freed
    — a stage's exit would then touch a freed call (a segfault in grpc core) and reset
    context variables from a foreign Context. Drained here, cancellation arrives as
    CancelledError in this task, and the generator is closed before the call ends.
    """
    behavior = handler.unary_stream or handler.stream_stream

    async def write(request: Any, context: Any) -> None:
        result = behavior(request, context)
        if inspect.isasyncgen(result):
            try:
                async for response in result:
                    await context.write(response)
            finally:
                await result.aclose()
        elif inspect.isawaitable(result):
            await result  # writes with context.write itself
        elif result is not None:
            for response in result:  # a plain generator
                await context.write(response)

    return write


# --------------------------------------------------------------------------- logging


class LoggingInterceptor(CallInterceptor):
    """One structured line per call (method, code, duration, request id) plus metrics."""

    def __init__(self, *, quiet_methods: Iterable[str] = QUIET_METHODS) -> None:
        self._quiet = frozenset(quiet_methods)

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        given = metadata_value(context.invocation_metadata(), REQUEST_ID_KEY)
        request_id, replaced = call_request_id(given)
        started = time.perf_counter()
        code = grpc.StatusCode.UNKNOWN
        token = _REQUEST_ID.set(request_id)
        bound = push_log_context(request_id=request_id, method=method)
        try:
            if replaced:
                await _announce_replaced(context, request_id, len(given or ""))
            result = await inner(request, context)
            code = context.code() or grpc.StatusCode.OK
            return result
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        except BaseException:
            code = context.code() or grpc.StatusCode.UNKNOWN
            raise
        finally:
            self._finish(method, code, time.perf_counter() - started, context)
            pop_log_context(bound)
            _REQUEST_ID.reset(token)

    def _finish(self, method: str, code: grpc.StatusCode, seconds: float, context: Any) -> None:
        observe_call(method, code, seconds)
        if code in _SERVER_FAULTS:
            log = _log.error
        elif method in self._quiet:
            log = _log.debug
        else:
            log = _log.info
        log("grpc call", code=code.name, duration_ms=round(seconds * 1000, 3), peer=context.peer())


async def _announce_replaced(context: Any, request_id: str, given_length: int) -> None:
    """Tell the caller (response header `x-request-id`) and the logs (a warning, without
    the unusable value itself) which correlation id its call really has."""
    _log.warning(
        "x-request-id replaced",
        given_length=given_length,
        limit=f"1-{MAX_REQUEST_ID} printable ASCII characters",
    )
    await context.send_initial_metadata(((REQUEST_ID_KEY, request_id),))


# --------------------------------------------------------------------------- errors


class ErrorInterceptor(CallInterceptor):
    """Typed errors become their status with details; a dependency's outage becomes
    UNAVAILABLE (`kozyr.runtime.outages`, the same in every service); anything else
    becomes a bare INTERNAL.

    The unexpected exception is logged with its traceback here and never reaches the
    caller: its text may hold internals (SQL, paths, other players' cards). A request
    that did not parse is refused here (INVALID_ARGUMENT, MALFORMED_REQUEST).
    `on_outage` hears of every outage met (the server's health follows them).
    """

    def __init__(self, on_outage: Callable[[Unavailable], None] | None = None) -> None:
        self._on_outage = on_outage

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        try:
            if isinstance(request, Undecodable):
                raise undecodable_request()
            return await inner(request, context)
        except grpc.aio.AbortError:
            raise  # the handler aborted the call itself
        except KozyrError as error:
            await _abort(context, error)
        except Exception as error:
            outage = dependency_outage(error)
            if outage is None:
                _log.exception("unhandled error in handler")
                await _abort(context, internal_error())
                return None
            _log.warning("dependency unavailable", reason=outage.reason, error=str(error))
            if self._on_outage is not None:
                self._on_outage(outage)
            await _abort(context, outage)


async def _abort(context: Any, error: KozyrError) -> None:
    language = _PREFERRED_LANGUAGE.get() or parse_lang(
        metadata_value(context.invocation_metadata(), LANGUAGE_KEY)
    )
    status = to_status(error, language=language)
    bind_log_context(reason=error.reason)
    await context.abort(status.code, status.details, status.trailing_metadata)


# --------------------------------------------------------------------------- auth


@dataclass(frozen=True)
class AuthPolicy:
    """Who may call which method. Health and reflection are always public.

    Keys of `method_roles` and members of `public_methods` are full method paths
    ("/kozyr.table.v1.TableService/CreateTable") or whole services
    ("kozyr.table.v1.TableService"); a method entry wins over its service's entry.
    Methods not listed accept `default_roles`. `everything_public` turns
    authentication off (local experiments and tests only).
    """

    default_roles: frozenset[Role] = ALL_ROLES
    method_roles: Mapping[str, frozenset[Role]] = field(default_factory=dict)
    public_methods: frozenset[str] = frozenset()
    everything_public: bool = False

    def is_public(self, method: str) -> bool:
        service = service_of(method)
        return (
            self.everything_public
            or service in ALWAYS_PUBLIC_SERVICES
            or method in self.public_methods
            or service in self.public_methods
        )

    def roles_for(self, method: str) -> frozenset[Role]:
        if method in self.method_roles:
            return self.method_roles[method]
        return self.method_roles.get(service_of(method), self.default_roles)


class AuthInterceptor(CallInterceptor):
    """Verifies the bearer token of every non-public call and enforces the role policy.

    The verified Principal is available to the handler as `current_principal()`.
    """

    def __init__(self, policy: AuthPolicy, verifier: TokenVerifier | None) -> None:
        if verifier is None and not policy.everything_public:
            raise ValueError("an AuthPolicy with protected methods needs a TokenVerifier")
        self._policy = policy
        self._verifier = verifier

    def stage_for(self, method: str, handler: Any) -> Stage | None:
        return None if self._policy.is_public(method) else self.stage

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        principal = self._authenticate(method, context.invocation_metadata())
        bind_log_context(caller=principal.subject, caller_role=principal.role.value)
        token = enter_principal(principal)
        try:
            return await inner(request, context)
        finally:
            leave_principal(token)

    def _authenticate(self, method: str, metadata: Metadata | None) -> Principal:
        assert self._verifier is not None  # guaranteed by __init__ for protected methods
        principal = self._verifier.verify(bearer_token(metadata))
        allowed = self._policy.roles_for(method)
        if principal.role not in allowed:
            raise role_not_allowed(principal.role, allowed)
        return principal
