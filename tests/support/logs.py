"""Capturing structlog's entries in a test, whatever an earlier test configured.

`structlog.testing.capture_logs` swaps the processors only: the level filter lives in
the bound logger's class (`make_filtering_bound_logger`), so once a test in the same
worker has configured logging at ERROR (a service's `serve` does), a warning is dropped
before any processor sees it and a test waiting for that warning waits in vain — a
flake that depends only on which tests xdist ran before it in that worker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import structlog
from structlog.testing import capture_logs
from structlog.typing import EventDict


@contextmanager
def every_log() -> Iterator[list[EventDict]]:
    """`capture_logs` at every level; the configuration before is restored after."""
    wrapper = structlog.get_config()["wrapper_class"]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET))
    try:
        with capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(wrapper_class=wrapper)
