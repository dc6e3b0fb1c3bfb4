"""Structured logs: JSON lines, process-wide service name, context bound per task."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from kozyr.runtime.logging import (
    bind_log_context,
    configure_logging,
    configure_logging_for,
    current_log_context,
    get_logger,
    log_context,
)
from kozyr.runtime.settings import load_settings


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    configure_logging("INFO", "json", service="table", stream=out)
    yield out
    configure_logging("INFO", "json")


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_is_one_json_object_with_context(stream: io.StringIO) -> None:
    with log_context(request_id="r-1", table_id="t-9", seat=2):
        get_logger("kozyr.test").info("card played", card="AS")
    (line,) = lines(stream)
    assert line["event"] == "card played"
    assert line["card"] == "AS"
    assert (line["request_id"], line["table_id"], line["seat"]) == ("r-1", "t-9", 2)
    assert line["service"] == "table"
    assert line["level"] == "info"
    assert line["logger"] == "kozyr.test"
    assert line["timestamp"].endswith("Z")


def test_positional_arguments_are_formatted(stream: io.StringIO) -> None:
    get_logger("kozyr.test").warning("pool %s exhausted after %d tries", "main", 3)
    (line,) = lines(stream)
    assert (line["event"], line["level"]) == ("pool main exhausted after 3 tries", "warning")


def test_values_json_cannot_hold_are_written_as_their_repr(stream: io.StringIO) -> None:
    get_logger().info("odd values", where={1: "a"}, what=object)
    (line,) = lines(stream)
    assert line["where"] == {"1": "a"}
    assert line["what"] == repr(object)


def test_a_line_below_the_level_builds_nothing(stream: io.StringIO) -> None:
    class Loud:
        def __repr__(self) -> str:
            raise AssertionError("a line below the level was rendered")

    get_logger().debug("hidden", value=Loud())
    assert stream.getvalue() == ""


def test_context_ends_with_its_block(stream: io.StringIO) -> None:
    with log_context(table_id="t-1"):
        pass
    get_logger().info("after")
    assert "table_id" not in lines(stream)[0]


def test_stdlib_loggers_write_the_same_json(stream: io.StringIO) -> None:
    with log_context(request_id="r-2"):
        logging.getLogger("sqlalchemy.engine").warning("pool %s exhausted", "main")
    (line,) = lines(stream)
    assert line["event"] == "pool main exhausted"
    assert line["request_id"] == "r-2"
    assert line["logger"] == "sqlalchemy.engine"


def test_exceptions_are_rendered_with_their_traceback(stream: io.StringIO) -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        get_logger().exception("failed")
    (line,) = lines(stream)
    assert "ValueError: boom" in line["exception"]


def test_the_level_filters(stream: io.StringIO) -> None:
    get_logger().debug("hidden")
    get_logger().info("shown")
    assert [line["event"] for line in lines(stream)] == ["shown"]


async def test_bindings_do_not_leak_between_tasks(stream: io.StringIO) -> None:
    async def handle(table_id: str) -> None:
        bind_log_context(table_id=table_id)
        await asyncio.sleep(0)
        get_logger().info("handled")

    await asyncio.gather(handle("t-a"), handle("t-b"))
    assert sorted(line["table_id"] for line in lines(stream)) == ["t-a", "t-b"]
    assert "table_id" not in current_log_context()


def test_console_format_and_settings() -> None:
    out = io.StringIO()
    configure_logging_for(load_settings(log_format="console", service_name="clock"), stream=out)
    try:
        get_logger().info("tick", turn=3)
    finally:
        configure_logging("INFO", "json")
    text = out.getvalue()
    assert "tick" in text
    assert "turn=3" in text
    assert "service=clock" in text
    assert not text.startswith("{")


def test_reconfiguring_replaces_the_handler() -> None:
    first, second = io.StringIO(), io.StringIO()
    configure_logging(stream=first)
    configure_logging(stream=second)
    try:
        get_logger().info("once")
    finally:
        configure_logging("INFO", "json")
    assert first.getvalue() == ""
    assert len(second.getvalue().splitlines()) == 1
