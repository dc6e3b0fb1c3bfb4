"""Traces across services (OpenTelemetry): W3C trace context in gRPC metadata and NATS
headers, one span per gRPC call, spans around the work worth seeing (an append, a bot's
turn). Off by default: without `KOZYR_OTLP_ENDPOINT` nothing is recorded or exported,
but an incoming trace context is still passed on, so a trace stays whole across a
service that does not export.

One bot move is one trace: the bots service starts (or continues, from the public
event's headers) a span for the turn; its GetTable and SubmitAction calls carry the
context in their metadata; the table service's server span and its append span are
children of it (tests/integration/runtime/test_runtime_tracing.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import grpc
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from kozyr.runtime.interceptors import CallInterceptor, Inner

_provider: trace.TracerProvider | None = None
"""The provider kozyr's spans come from: the configured one, else OpenTelemetry's global."""


def configure_tracing(service_name: str, otlp_endpoint: str | None) -> None:
    """Export spans to an OTLP collector at `otlp_endpoint` (gRPC); None: record nothing.
    Called once per process, by the gRPC server (`KOZYR_OTLP_ENDPOINT`)."""
    global _provider
    if otlp_endpoint is None or _provider is not None:
        return
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_endpoint)))
    _provider = provider


@contextlib.contextmanager
def using_provider(provider: trace.TracerProvider) -> Iterator[None]:
    """Record kozyr's spans with `provider` for a while (tests: an in-memory exporter)."""
    global _provider
    previous, _provider = _provider, provider
    try:
        yield
    finally:
        _provider = previous


def tracer() -> trace.Tracer:
    return (_provider or trace.get_tracer_provider()).get_tracer("kozyr")


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[trace.Span]:
    """A span of kozyr's work, child of the current one."""
    return tracer().start_as_current_span(name, attributes=attributes)


# --------------------------------------------------------------------------- NATS


def context_headers() -> dict[str, str]:
    """The current trace context as message headers (empty outside a trace)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextlib.contextmanager
def continued_from(
    headers: Mapping[str, str] | None, name: str, **attributes: Any
) -> Iterator[trace.Span]:
    """A consumer's span for one message, continuing the trace its headers name."""
    parent = propagate.extract(dict(headers or {}))
    with tracer().start_as_current_span(
        name, context=parent, kind=SpanKind.CONSUMER, attributes=attributes
    ) as current:
        yield current


# --------------------------------------------------------------------------- gRPC


def _recording() -> bool:
    """Whether spans are recorded (exported) at all: a provider was configured here or
    installed as OpenTelemetry's global one."""
    return _provider is not None or not isinstance(
        trace.get_tracer_provider(), trace.ProxyTracerProvider
    )


def _carries_context(metadata: Sequence[tuple[str, Any]] | None) -> bool:
    """Whether a call's metadata holds a trace context (or baggage) to pass on."""
    fields = propagate.get_global_textmap().fields
    return any(key in fields for key, _ in metadata or ())


def _carrier(metadata: Sequence[tuple[str, Any]] | None) -> dict[str, str]:
    return {k: v for k, v in metadata or () if isinstance(v, str)}


class TracingInterceptor(CallInterceptor):
    """A server span per call, child of the caller's trace context (if it sent one)."""

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        metadata = context.invocation_metadata()
        if not _recording() and not _carries_context(metadata):
            return await inner(request, context)  # no span to record, no trace to pass on
        parent = propagate.extract(_carrier(metadata))
        with tracer().start_as_current_span(
            method.lstrip("/"), context=parent, kind=SpanKind.SERVER
        ) as current:
            try:
                return await inner(request, context)
            finally:
                code = context.code()
                if code not in (None, grpc.StatusCode.OK):
                    current.set_status(Status(StatusCode.ERROR, getattr(code, "name", "")))


def _with_context(details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
    headers = context_headers()
    if not headers:
        return details
    metadata = [*(details.metadata or ()), *headers.items()]
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


class TraceContextClientInterceptor(
    grpc.aio.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.UnaryStreamClientInterceptor,  # type: ignore[misc]
):
    """Puts the current trace context into every outgoing call's metadata."""

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return await continuation(_with_context(details), request)

    async def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return await continuation(_with_context(details), request)
