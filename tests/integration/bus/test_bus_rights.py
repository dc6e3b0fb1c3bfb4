"""NATS rights per service, on a real nats-server configured by `kozyr.bus.rights`: the
bots may read the public table events and cannot reach the raw ones (hidden cards) —
neither by subscribing, nor by a JetStream consumer, nor by reading a message; each
service's outbox relay publishes its own categories under its own user, and no other's;
and a deployment's own NATS configuration (compose's file, the prod Helm values) lets
nobody in without credentials."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
import yaml
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js.api import ConsumerConfig

from kozyr.bus.relay import Backoff, OutboxRelay
from kozyr.bus.rights import (
    ADMIN_USER,
    SERVICES,
    nats_url_for,
    password_variable,
    server_config,
)
from kozyr.bus.streams import MATCHMAKING_CATEGORIES, EventStreamSpec, ensure_stream, jetstream_name
from kozyr.eventstore import NewEvent, PostgresEventStore, migrate
from kozyr.infra import EmbeddedNats
from tests.integration.bus.test_bus_relay import wait_until

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


REPO = Path(__file__).resolve().parents[3]
PROD_HELM_VALUES = REPO / "deploy/k8s/overlays/prod/nats-values.yaml"


def _deployed_config(which: str, folder: Path) -> Path:
    """A deployment's NATS configuration file, as its server reads it: compose's
    deploy/nats/nats.conf as committed, or the prod Helm values' `config.merge` as the
    chart writes it (JSON, its `<< $VAR >>` unquoted: read from the environment)."""
    if which == "nats.conf":
        return REPO / "deploy/nats/nats.conf"
    merge = yaml.safe_load(PROD_HELM_VALUES.read_text())["config"]["merge"]
    rendered = folder / "helm-nats.conf"
    text = re.sub(r'"<< (\$\w+) >>"', r"\1", json.dumps(merge, indent=2))
    rendered.write_text(text + "\n")
    return rendered


@pytest.mark.parametrize("which", ["nats.conf", "prod Helm values"])
async def test_a_deployments_nats_refuses_a_connection_without_credentials(
    which: str, tmp_path: Path
) -> None:
    """The refusal is the deployed configuration's, not a golden file's: a real
    nats-server runs it (passwords from its environment, as compose and the chart give
    them). Every service's user gets in with its password, so the server is up and
    reading these users — and neither no credentials nor a wrong password do."""
    passwords = {user: f"pw{secrets.token_hex(8)}" for user in (*SERVICES, ADMIN_USER)}
    server = EmbeddedNats(
        tmp_path / "nats",
        config=_deployed_config(which, tmp_path),
        environment={password_variable(user): pw for user, pw in passwords.items()},
    )
    server.start()
    once = {"allow_reconnect": False, "max_reconnect_attempts": 0, "connect_timeout": 5}
    try:
        for user, password in passwords.items():
            nc = await nats.connect(nats_url_for(server.url, user, password), **once)
            await nc.flush()
            await nc.close()
        for url in (server.url, nats_url_for(server.url, "bots", "not-its-password")):
            with pytest.raises(NatsError, match="Authorization Violation"):
                await nats.connect(url, **once)
    finally:
        server.stop()


async def _relayed_by_matchmaking(url: str, database_url: str) -> None:
    """A lobby and a rating event appended to matchmaking's own database, published by its
    relay connected as the matchmaking user (which makes its streams first)."""
    await migrate(database_url)
    async with PostgresEventStore(database_url) as store:
        for stream in ("lobby-main", "rating-three_five_eight-ana"):
            await store.append(stream, 0, [NewEvent("Noted", {"n": 1})], request_id=stream)
        relay = OutboxRelay(
            store, url, categories=MATCHMAKING_CATEGORIES, subject_root=ROOT,
            backoff=Backoff(initial=0.05, maximum=0.5),
        )  # fmt: skip
        running = asyncio.create_task(relay.run())
        try:

            async def drained() -> bool:
                return not (await store.outbox_backlog()).entries

            await wait_until(drained, "matchmaking's relay publishes its outbox")
        finally:
            relay.stop()
            await running


async def test_each_relay_publishes_its_own_categories_and_no_others(
    urls: dict[str, str], database_url: str
) -> None:
    await _relayed_by_matchmaking(urls["matchmaking"], database_url)
    admin = await nats.connect(urls[ADMIN_USER])
    for category in MATCHMAKING_CATEGORIES:
        info = await admin.jetstream().stream_info(jetstream_name(category, ROOT))
        assert info.state.messages == 1
    await admin.close()

    errors: list[Exception] = []

    async def reported(error: Exception) -> None:
        errors.append(error)

    table = await nats.connect(urls["table"], error_cb=reported)
    with pytest.raises(REFUSED):  # the stream exists: only the right is missing
        await table.jetstream(timeout=1.0).publish(f"{ROOT}.lobby.main.Noted", b"{}")
    with pytest.raises(REFUSED):  # once: a refusal is not JetStream settling
        await ensure_stream(table.jetstream(timeout=1.0), EventStreamSpec("rating", ROOT), 0)
    await table.close()
    matchmaking = await nats.connect(urls["matchmaking"], error_cb=reported)
    with pytest.raises(REFUSED):
        await ensure_stream(matchmaking.jetstream(timeout=1.0), EventStreamSpec("table", ROOT), 0)
    await matchmaking.close()
    refused = [str(e).lower() for e in errors if "permissions violation" in str(e).lower()]
    assert any(f'publish to "{ROOT}.lobby.main.noted"' in e for e in refused), errors
    assert any("stream.info.rights_rating" in e for e in refused), errors
    assert any("stream.info.rights_table" in e for e in refused), errors
