"""The clock's calls to the table service, as the service identity "clock"
(`kozyr.client.caller.ServiceCaller` keeps its token fresh)."""

from __future__ import annotations

import grpc

from kozyr.client.caller import ServiceCaller
from kozyr.runtime.auth import TokenMinter

SERVICE_SUBJECT = "clock"
CALL_SECONDS = 4.0
"""A call to the table service is given up after this (and the timer redelivered): less
than the consumers' ack_wait, so a hung table service never holds a timer longer than
JetStream would before handing it to another replica."""


class TableCaller(ServiceCaller):
    """A `TableClient` acting as the clock service."""

    def __init__(
        self,
        target: str,
        minter: TokenMinter,
        ttl_seconds: float,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        super().__init__(target, minter, ttl_seconds, SERVICE_SUBJECT, credentials=credentials)
