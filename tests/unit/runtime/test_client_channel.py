"""Every kozyr client channel reconnects promptly to a service that comes back.

gRPC's default reconnect backoff grows to 120 s: a caller that kept trying through a
restart of the service it calls stays cut off long after the service is back (measured:
29 s after a 40 s outage). Every channel kozyr makes — the services' calls to each
other, the CLI, the client library — is built from `channel_options`.
"""

from __future__ import annotations

import pytest

from kozyr.client.channel import channel_options


@pytest.mark.parametrize("retry", [True, False])
def test_every_channel_tries_again_within_five_seconds(retry: bool) -> None:
    options = dict(channel_options(retry=retry, services=("kozyr.table.v1.TableService",)))
    assert options["grpc.initial_reconnect_backoff_ms"] <= 1_000
    assert options["grpc.max_reconnect_backoff_ms"] <= 5_000
    assert options["grpc.enable_retries"] == int(retry)
