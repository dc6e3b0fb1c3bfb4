"""NATS rights per service, on a real nats-server configured by `kozyr.bus.rights`: the
bots may read the public table events and cannot reach the raw ones (hidden cards) —
neither by subscribing, nor by a JetStream consumer, nor by reading a message."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js.api import ConsumerConfig

from kozyr.bus.rights import ADMIN_USER, SERVICES, nats_url_for, server_config
from kozyr.bus.streams import EventStreamSpec, ensure_stream, jetstream_name
from kozyr.infra import EmbeddedNats

pytestmark = pytest.mark.integration

ROOT = "rights"
RAW, PUBLIC = jetstream_name("table", ROOT), jetstream_name("public", ROOT)
REFUSED = (NatsError, TimeoutError)
"""A request to a subject the user may not publish on is dropped by the server (and
reported asynchronously): the caller sees a timeout or a permissions error."""


@pytest.fixture
def urls(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Each service's (and the admin's) URL to a NATS server of these rights."""
    passwords = {name: secrets.token_urlsafe(12) for name in (*SERVICES, ADMIN_USER)}
    config = tmp_path / "nats.conf"
    config.write_text(server_config(passwords, ROOT, anonymous_admin=False))
    server = EmbeddedNats(tmp_path / "nats", config=config)
    server.start()
    try:
        yield {name: nats_url_for(server.url, name, pw) for name, pw in passwords.items()}
    finally:
        server.stop()


async def _published_by_the_table(url: str) -> None:
    """The table service's streams, one raw and one public message."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    for tree in ("table", "public"):
        await ensure_stream(js, EventStreamSpec(tree, ROOT))
    await js.publish(f"{ROOT}.table.t1.CardsDealt", b'{"hand": ["AS", "KS"]}')
    await js.publish(f"{ROOT}.public.table.t1.TurnStarted", b"public")
    await nc.close()


async def test_the_bots_read_public_events_and_never_raw_ones(urls: dict[str, str]) -> None:
    await _published_by_the_table(urls["table"])
    errors: list[Exception] = []

    async def reported(error: Exception) -> None:
        errors.append(error)

    bots = await nats.connect(urls["bots"], error_cb=reported)
    js = bots.jetstream(timeout=1.0)
    public = await js.pull_subscribe_bind(
        durable=(await js.add_consumer(PUBLIC, ConsumerConfig(durable_name="bots"))).name,
        stream=PUBLIC,
    )
    (message,) = await public.fetch(1, timeout=5)
    assert message.data == b"public"
    await message.ack()

    heard: list[bytes] = []

    async def peek(message: Msg) -> None:
        heard.append(message.data)

    await bots.subscribe(f"{ROOT}.table.>", cb=peek)
    await bots.flush()
    await asyncio.sleep(0.3)
    assert any("permissions violation" in str(e) for e in errors), errors
    with pytest.raises(REFUSED):
        await js.add_consumer(RAW, ConsumerConfig(durable_name="peek"))
    with pytest.raises(REFUSED):
        await js.get_msg(RAW, 1)
    with pytest.raises(REFUSED):
        await js.delete_stream(PUBLIC)
    assert heard == []
    await bots.close()


async def test_nobody_connects_without_credentials(urls: dict[str, str]) -> None:
    anonymous = urls["table"].replace(urls["table"].split("//")[1].split("@")[0] + "@", "")
    with pytest.raises(REFUSED):
        await nats.connect(anonymous, allow_reconnect=False, max_reconnect_attempts=0)
