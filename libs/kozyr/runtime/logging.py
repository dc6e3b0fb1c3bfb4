"""Structured logging: one JSON object per line, with the call's context bound automatically.

Configure once per process with `configure_logging(...)` (or `configure_logging_for(settings)`).
Context that should appear on every line of a unit of work — `request_id`, `table_id`,
`seat`, `player_id` — is bound with `log_context(...)`: it lives in contextvars, so it
follows the asyncio task handling a call and never leaks into other calls. The gRPC
server binds `request_id` and `method` for every call.

Standard-library loggers (grpc, asyncio, sqlalchemy, nats) are routed through the same
renderer, so the whole process speaks one format.

kozyr's own (structlog) lines take the short way: a line below the level is dropped by
the bound logger's method itself (structlog's filtering logger: a no-op, nothing built),
and a line at or above it is rendered by structlog (orjson) and written to the handler's
stream directly — not as a stdlib `LogRecord` copied and formatted again by
`ProcessorFormatter`, which made a gRPC call's one line cost ~140 µs (tests/bench/
bench_edge.py). The line's fields are the same either way.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import Token
from typing import Any, TextIO

import orjson
import structlog
from structlog.types import EventDict, Processor, WrappedLogger

from kozyr.runtime.settings import LogFormat, Settings

_HANDLER_NAME = "kozyr"


def _static_fields(fields: Mapping[str, Any]) -> Processor:
    """A processor adding process-wide fields (the service name) to every event."""

    def add(_: WrappedLogger, __: str, event: EventDict) -> EventDict:
        for key, value in fields.items():
            event.setdefault(key, value)
        return event

    return add


def _shared_processors(service: str | None) -> list[Processor]:
    processors: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if service:
        processors.append(_static_fields({"service": service}))
    return processors


def _json_fallback(value: Any) -> Any:
    """What a value JSON cannot hold becomes (as structlog's stdlib renderer did)."""
    return value.__structlog__() if hasattr(value, "__structlog__") else repr(value)


def _dumps(value: Any, **_: Any) -> str:
    return orjson.dumps(value, default=_json_fallback, option=orjson.OPT_NON_STR_KEYS).decode()


def _renderer(fmt: LogFormat) -> Processor:
    if fmt == "console":
        return structlog.dev.ConsoleRenderer(colors=False)
    return structlog.processors.JSONRenderer(serializer=_dumps)


class _LineWriter:
    """structlog's logger: writes each rendered line to the handler's stream, under the
    handler's lock (so that a stdlib line from another thread is never interleaved)."""

    def __init__(self, handler: logging.StreamHandler[TextIO], name: str) -> None:
        self.name = name
        self._handler = handler

    def msg(self, line: str) -> None:
        handler = self._handler
        handler.acquire()
        try:
            handler.stream.write(line + "\n")
            handler.stream.flush()
        finally:
            handler.release()

    debug = info = warning = warn = error = err = critical = exception = fatal = log = msg


def _line_writers(handler: logging.StreamHandler[TextIO]) -> Any:
    def factory(*args: Any) -> _LineWriter:
        return _LineWriter(handler, str(args[0]) if args and args[0] else "root")

    return factory


def configure_logging(
    level: str = "INFO",
    fmt: LogFormat = "json",
    *,
    service: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """Set up structlog and the stdlib root logger to write `fmt` lines to `stream`.

    Idempotent: calling again replaces the previous configuration (tests reconfigure).
    Logs go to stderr by default, keeping stdout free for a CLI's output.
    """
    shared = _shared_processors(service)
    renderer = _renderer(fmt)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        logger_factory=_line_writers(handler),
        # the level check is the method itself: below it, nothing is built
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        cache_logger_on_first_use=False,  # tests and launchers reconfigure
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())


def configure_logging_for(settings: Settings, *, stream: TextIO | None = None) -> None:
    """`configure_logging` with the settings' level, format and service name."""
    configure_logging(
        settings.log_level, settings.log_format, service=settings.service_name, stream=stream
    )


def get_logger(name: str | None = None, **initial: Any) -> structlog.typing.FilteringBoundLogger:
    """A structured logger; `initial` values are bound to every line it writes."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger.bind(**initial) if initial else logger


@contextmanager
def log_context(**values: Any) -> Iterator[None]:
    """Bind values (request_id, table_id, seat, ...) to every log line inside the block."""
    tokens = structlog.contextvars.bind_contextvars(**values)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)


def push_log_context(**values: Any) -> Mapping[str, Token[Any]]:
    """Bind values until `pop_log_context(tokens)`: `log_context` without a context
    manager, for the gRPC edge's every call (a with-block costs two generator frames)."""
    return structlog.contextvars.bind_contextvars(**values)


def pop_log_context(tokens: Mapping[str, Token[Any]]) -> None:
    """Restore what `push_log_context` changed."""
    structlog.contextvars.reset_contextvars(**tokens)


def bind_log_context(**values: Any) -> None:
    """Bind values for the rest of the current task (e.g. a handler learns its table_id)."""
    structlog.contextvars.bind_contextvars(**values)


def current_log_context() -> MutableMapping[str, Any]:
    """The values bound in the current context (what the next line will carry)."""
    return structlog.contextvars.get_contextvars()
