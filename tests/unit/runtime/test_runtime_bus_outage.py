"""The edge tells a NATS outage (UNAVAILABLE BUS_UNAVAILABLE, retried by clients) from a
bug (INTERNAL): tests/integration/clock/test_clock_bus_outage.py sees it end to end."""

from __future__ import annotations

import grpc
import nats.errors
import nats.js.errors
import pytest

from kozyr.runtime.outages import bus_unavailable, dependency_outage, is_bus_outage


@pytest.mark.parametrize(
    "error",
    [
        nats.errors.TimeoutError(),
        nats.errors.NoServersError(),
        nats.errors.NoRespondersError(),
        nats.errors.ConnectionClosedError(),
        nats.errors.ConnectionReconnectingError(),
        nats.errors.StaleConnectionError(),
        nats.errors.OutboundBufferLimitError(),
        nats.js.errors.ServiceUnavailableError(code=503, description="JetStream unavailable"),
    ],
    ids=type,
)
def test_a_nats_outage_is_one(error: Exception) -> None:
    assert is_bus_outage(error)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("a bug"),
        TimeoutError(),  # the handler's own timeout: not the bus's to explain
        nats.errors.BadSubjectError(),
        nats.js.errors.NotFoundError(code=404, description="stream not found"),
    ],
    ids=type,
)
def test_anything_else_is_not(error: Exception) -> None:
    assert not is_bus_outage(error)


def test_the_answer_is_unavailable_in_every_language() -> None:
    error = bus_unavailable()
    assert error.code == grpc.StatusCode.UNAVAILABLE
    assert error.reason == "BUS_UNAVAILABLE"
    assert set(error.messages) == {"en", "ro", "it"}


def test_the_edge_s_one_outage_mapping_answers_a_nats_outage_so() -> None:
    """The error stage asks `dependency_outage` alone: a bus outage is one of its answers."""
    outage = dependency_outage(nats.errors.NoServersError())
    assert outage is not None
    assert outage.reason == "BUS_UNAVAILABLE"
    assert dependency_outage(RuntimeError("a bug")) is None
