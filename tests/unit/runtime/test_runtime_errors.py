"""Typed errors → google.rpc.Status with ErrorInfo and LocalizedMessages (AIP-193)."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from kozyr.runtime.errors import (
    ERROR_DOMAIN,
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    KozyrError,
    NotFound,
    ResourceExhausted,
    Unavailable,
    internal_error,
    to_rich_status,
    to_status,
)
from kozyr.runtime.limits import server_busy
from kozyr.texts import Lang

TEXTS = {"en": "It is not your turn.", "ro": "Nu este rândul tău.", "it": "Non è il tuo turno."}


def unpack(status: status_pb2.Status) -> tuple[error_details_pb2.ErrorInfo, list[tuple[str, str]]]:
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    localized = []
    for detail in status.details[1:]:
        message = error_details_pb2.LocalizedMessage()
        assert detail.Unpack(message)
        localized.append((message.locale, message.message))
    return info, localized


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
        (NotFound, grpc.StatusCode.NOT_FOUND),
        (FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
        (Aborted, grpc.StatusCode.ABORTED),
    ],
)
def test_the_class_decides_the_status_code(cls: type[KozyrError], code: grpc.StatusCode) -> None:
    status = to_rich_status(cls("SOME_REASON", "text"))
    assert status.code == code.value[0]


def test_the_status_carries_error_info_and_every_language() -> None:
    error = FailedPrecondition("NOT_YOUR_TURN", TEXTS, metadata={"turn": "7"})
    status = to_rich_status(error, language="it")
    info, localized = unpack(status)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "NOT_YOUR_TURN",
        ERROR_DOMAIN,
        {"turn": "7"},
    )
    assert localized == [("it", TEXTS["it"]), ("en", TEXTS["en"]), ("ro", TEXTS["ro"])]
    assert status.message == TEXTS["en"], "the status message is the developer (English) text"


def test_an_english_only_error_sends_one_localized_message() -> None:
    _, localized = unpack(
        to_rich_status(InvalidArgument("BAD_CARD", "not a card: 'ZZ'"), language="ro")
    )
    assert localized == [("en", "not a card: 'ZZ'")]


def test_the_grpc_status_puts_the_rich_status_in_the_trailers() -> None:
    error = NotFound("TABLE_NOT_FOUND", "no such table")
    status = to_status(error)
    assert status.code == grpc.StatusCode.NOT_FOUND
    assert status.details == "no such table"
    ((key, value),) = status.trailing_metadata
    assert key == "grpc-status-details-bin"
    assert status_pb2.Status.FromString(value) == to_rich_status(error)


def pushback(error: KozyrError) -> list[str | bytes]:
    return [v for k, v in to_status(error).trailing_metadata if k == "grpc-retry-pushback-ms"]


def test_a_quota_tells_automatic_retries_to_stay_away_but_a_busy_server_does_not() -> None:
    """gRFC A6: a negative pushback stops a client's retry policy from repeating the
    call. A quota (TOO_MANY_SIGNALS) is the caller's to respect; a busy server, a
    shutting down one or an unreachable store are worth retrying after a backoff."""
    assert pushback(ResourceExhausted("TOO_MANY_SIGNALS", "slow down")) == ["-1"]
    assert pushback(server_busy()) == []
    assert pushback(Unavailable("STORE_UNAVAILABLE", "later")) == []


@pytest.mark.parametrize("reason", ["lower_case", "TRAILING_", "WITH SPACE", "", "A" * 64])
def test_reasons_must_be_upper_snake_case(reason: str) -> None:
    with pytest.raises(ValueError, match="UPPER_SNAKE_CASE"):
        NotFound(reason, "text")


def test_an_english_text_is_required() -> None:
    with pytest.raises(ValueError, match="English"):
        NotFound("NO_ENGLISH", {"ro": "doar română"})


def test_message_in_falls_back_to_english() -> None:
    error = FailedPrecondition("NOT_YOUR_TURN", {"en": "en text", "ro": "text ro"})
    assert error.message_in("ro-RO") == "text ro"
    assert error.message_in("it") == "en text"
    assert str(error) == "NOT_YOUR_TURN: en text"


def test_the_internal_error_says_nothing_specific() -> None:
    error = internal_error()
    assert error.code == grpc.StatusCode.INTERNAL
    assert error.reason == "INTERNAL"
    assert set(error.messages) == {"en", "ro", "it"}


def test_messages_keyed_by_the_games_language_enum_are_accepted() -> None:
    error = FailedPrecondition("NOT_YOUR_TURN", {Lang.EN: TEXTS["en"], Lang.RO: TEXTS["ro"]})
    assert dict(error.messages) == {"en": TEXTS["en"], "ro": TEXTS["ro"]}
    _, localized = unpack(to_rich_status(error, language="ro"))
    assert localized == [("ro", TEXTS["ro"]), ("en", TEXTS["en"])]
