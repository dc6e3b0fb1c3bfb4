"""Structured logging: one JSON object per line, with the call's context bound automatically.

Configure once per process with `configure_logging(...)` (or `configure_logging_for(settings)`).
Context that should appear on every line of a unit of work — `request_id`, `table_id`,
`seat`, `player_id` — is bound with `log_context(...)`: it lives in contextvars, so it
follows the asyncio task handling a call and never leaks into other calls. The gRPC
server binds `request_id` and `method` for every call.

Standard-library loggers (grpc, asyncio, sqlalchemy, nats) are routed through the same
renderer, so the whole process speaks one format.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any, TextIO

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


def _renderer(fmt: LogFormat) -> Processor:
    if fmt == "console":
        return structlog.dev.ConsoleRenderer(colors=False)
    return structlog.processors.JSONRenderer()


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
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,  # first: a line below the level costs nothing more
            *shared,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,  # tests and launchers reconfigure
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _renderer(fmt),
        ],
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter)
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


def get_logger(name: str | None = None, **initial: Any) -> structlog.stdlib.BoundLogger:
    """A structured logger; `initial` values are bound to every line it writes."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name)
    return logger.bind(**initial) if initial else logger


@contextmanager
def log_context(**values: Any) -> Iterator[None]:
    """Bind values (request_id, table_id, seat, ...) to every log line inside the block."""
    with structlog.contextvars.bound_contextvars(**values):
        yield


def bind_log_context(**values: Any) -> None:
    """Bind values for the rest of the current task (e.g. a handler learns its table_id)."""
    structlog.contextvars.bind_contextvars(**values)


def current_log_context() -> MutableMapping[str, Any]:
    """The values bound in the current context (what the next line will carry)."""
    return structlog.contextvars.get_contextvars()
