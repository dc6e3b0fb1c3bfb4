"""TLS between kozyr services: a table service given a certificate speaks TLS only; a
client that trusts its CA works, a plain client and one trusting another CA are refused
— and a clock service configured with the CA calls it (its settings make the channel)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.clock.tables import TableCaller
from kozyr.runtime import SettingsError, load_settings
from kozyr.runtime.auth import Role
from tests.integration.table.conftest import running_table_service
from tests.support.tables import JWT_KEY, token
from tests.support.tls import make_tls_files

pytestmark = pytest.mark.integration


async def test_a_tls_table_service_serves_only_clients_that_trust_it(
    database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> None:
    tls = make_tls_files(tmp_path)
    (tmp_path / "other").mkdir()
    stranger = make_tls_files(tmp_path / "other", "another CA")
    async with running_table_service(
        database_url,
        nats_url,
        subject_root,
        grpc_tls_cert_file=str(tls.cert),
        grpc_tls_key_file=str(tls.key),
    ) as running:
        trusted = load_settings(jwt_key=JWT_KEY, grpc_tls_ca_file=str(tls.ca))
        async with TableClient(
            running.target,
            token("mm", Role.SERVICE),
            credentials=trusted.channel_credentials(),
        ) as client:
            created = await client.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["a", "b", "c"])
            assert created.version > 0

        caller = TableCaller(
            running.target, trusted.token_minter(), 60, trusted.channel_credentials()
        )
        assert (await caller.table.get_table(created.table_id, seat=0)).seat == 0
        await caller.close()

        untrusted = load_settings(grpc_tls_ca_file=str(stranger.ca)).channel_credentials()
        for credentials in (None, untrusted):
            async with TableClient(
                running.target, token("mm", Role.SERVICE), credentials=credentials, retry=False
            ) as client:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.get_table(created.table_id)
                assert refused.value.code() is grpc.StatusCode.UNAVAILABLE


def test_tls_settings_are_checked_at_start(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as half:
        load_settings(grpc_tls_cert_file=str(tmp_path / "cert.pem"))
    assert "KOZYR_GRPC_TLS_KEY_FILE" in str(half.value)
    missing = load_settings(grpc_tls_ca_file=str(tmp_path / "nowhere.pem"))
    with pytest.raises(SettingsError) as unreadable:
        missing.channel_credentials()
    assert "KOZYR_GRPC_TLS_CA_FILE" in str(unreadable.value)
