"""The web edge's pure parts: frames, trailers, timeouts, origins, routes, metadata."""

from __future__ import annotations

import base64
import struct

import pytest

from kozyr.runtime import load_settings
from kozyr.runtime.errors import KozyrError
from kozyr.webedge import framing
from kozyr.webedge.cors import OriginPolicy
from kozyr.webedge.proxy import forwarded_metadata
from kozyr.webedge.routes import route, targets_of


def test_a_message_frame_is_flag_length_payload() -> None:
    assert framing.frame(b"abc") == b"\x00\x00\x00\x00\x03abc"
    assert framing.frame(b"") == b"\x00\x00\x00\x00\x00"
    big = b"x" * 70_000
    assert framing.frame(big)[:5] == b"\x00" + struct.pack(">I", 70_000)


def test_the_trailer_frame_holds_crlf_header_lines_in_lower_case() -> None:
    block = framing.trailer_frame([("Grpc-Status", "3"), ("grpc-message", "bad")])
    body = b"grpc-status: 3\r\ngrpc-message: bad\r\n"
    assert block == b"\x80" + struct.pack(">I", len(body)) + body


def test_the_one_message_of_a_request_is_read() -> None:
    assert framing.single_message(b"\x00\x00\x00\x00\x03abc") == b"abc"
    assert framing.single_message(b"\x00\x00\x00\x00\x00") == b""


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"", "needs at least 5"),
        (b"\x00\x00\x00", "needs at least 5"),
        (b"\x00\x00\x00\x00\x04abc", "announces 4 bytes but 3 follow"),
        (b"\x00\x00\x00\x00\x02abc", "1 bytes follow the message"),
        (b"\x01\x00\x00\x00\x00", "compressed"),
        (b"\x80\x00\x00\x00\x00", "trailer frame"),
        (b"\x02\x00\x00\x00\x00", "unknown frame flag 0x02"),
    ],
)
def test_a_malformed_request_says_what_is_wrong(body: bytes, says: str) -> None:
    with pytest.raises(framing.FramingError, match=says):
        framing.single_message(body)


def test_grpc_web_text_decodes_padded_or_not_and_refuses_what_is_not_base64() -> None:
    frame = framing.frame(b"hi")
    assert framing.decode_text(base64.b64encode(frame)) == frame
    assert framing.decode_text(base64.b64encode(frame).rstrip(b"=")) == frame
    with pytest.raises(framing.FramingError, match="base64"):
        framing.decode_text(b"***")
    assert framing.encode_text(b"\x00\x01") == b"AAE="


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1H", 3600.0), ("2M", 120.0), ("3S", 3.0), ("250m", 0.25), ("5u", 5e-6), ("7n", 7e-9)],
)
def test_grpc_timeout_units(value: str, seconds: float) -> None:
    assert framing.parse_timeout(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["", "S", "10", "10s", "123456789S", "-1S", "1.5S", "１S"])
def test_a_malformed_grpc_timeout_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="grpc-timeout"):
        framing.parse_timeout(value)


def test_grpc_message_is_percent_encoded_outside_printable_ascii() -> None:
    assert framing.encode_message_text("Nu e rândul tău: 100%") == (
        "Nu e r%C3%A2ndul t%C4%83u: 100%25"
    )
    assert framing.encode_message_text("plain text, (ok)!") == "plain text, (ok)!"


def test_binary_metadata_is_unpadded_base64_and_read_either_way() -> None:
    assert framing.encode_binary(b"\x01\x02") == "AQI"
    assert framing.decode_binary("AQI") == b"\x01\x02"
    assert framing.decode_binary("AQI=") == b"\x01\x02"
    assert framing.decode_binary("AQI, AQ") == b"\x01\x02\x01"
    with pytest.raises(ValueError, match="base64"):
        framing.decode_binary("*")


def test_origins_exact_any_port_and_any() -> None:
    policy = OriginPolicy.parse("https://Play.example.com/, http://127.0.0.1:*")
    assert policy.allows("https://play.example.com")
    assert not policy.allows("http://play.example.com")
    assert not policy.allows("https://play.example.com.evil")
    assert not policy.allows("https://play.example.com:8443")
    assert policy.allows("http://127.0.0.1:5173")
    assert not policy.allows("http://127.0.0.1")
    assert not policy.allows("http://127.0.0.10:5173")
    assert not policy.allows("http://127.0.0.1:x")
    assert not OriginPolicy.parse(None).allows("https://play.example.com")
    assert OriginPolicy.parse("*").allows("https://anything.example")


def test_each_client_facing_service_goes_to_its_own_backend() -> None:
    settings = load_settings(
        table_target="t:1", matchmaking_target="m:2", bots_target="b:3", clock_target="c:4"
    )
    targets = targets_of(settings)
    for path, backend, target, streaming in [
        ("/kozyr.table.v1.TableService/WatchTable", "table", "t:1", True),
        ("/kozyr.table.v1.TableService/SubmitAction", "table", "t:1", False),
        ("/kozyr.matchmaking.v1.MatchmakingService/WatchTicket", "matchmaking", "m:2", True),
        ("/kozyr.matchmaking.v1.MatchmakingService/EnterQueue", "matchmaking", "m:2", False),
        ("/kozyr.bots.v1.BotsService/SuggestAction", "bots", "b:3", False),
        ("/kozyr.clock.v1.ClockService/Heartbeat", "clock", "c:4", False),
        ("/kozyr.table.v1.TableService/Later", "table", "t:1", False),
    ]:
        found = route(path, targets)
        assert found is not None, path
        assert (found.backend, found.target, found.path, found.streaming) == (
            backend, target, path, streaming
        )  # fmt: skip
    for path in (
        "/grpc.health.v1.Health/Check",
        "/kozyr.table.v1.TableService",
        "/kozyr.table.v1.TableService/Get/Table",
        "/kozyr.table.v1.TableServiceX/GetTable",
        "//GetTable",
    ):
        assert route(path, targets) is None, path
    assert route("/kozyr.clock.v1.ClockService/Heartbeat", {"table": "t:1"}) is None


def test_the_callers_metadata_is_passed_on_and_the_browsers_own_is_not() -> None:
    given = [
        ("Authorization", "Bearer abc"),
        ("Accept-Language", "ro"),
        ("X-Request-Id", "r-1"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("x-token-bin", "AQI"),
        ("Cookie", "session=secret"),
        ("Content-Type", "application/grpc-web+proto"),
        ("Origin", "https://play.example.com"),
        ("grpc-timeout", "1S"),
        ("Sec-Fetch-Mode", "cors"),
        ("User-Agent", "Mozilla/5.0"),
        ("X-Grpc-Web", "1"),
        ("Host", "edge:8080"),
    ]
    assert forwarded_metadata(given) == [
        ("authorization", "Bearer abc"),
        ("accept-language", "ro"),
        ("x-request-id", "r-1"),
        ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("x-token-bin", b"\x01\x02"),
    ]


@pytest.mark.parametrize(
    "header", [("x-name", "Ana Pérez"), ("x name", "a"), ("x-trace-bin", "not base64!")]
)
def test_metadata_grpc_cannot_carry_is_refused(header: tuple[str, str]) -> None:
    with pytest.raises(KozyrError) as caught:
        forwarded_metadata([header])
    assert caught.value.reason == "BAD_HEADER"
