"""A platform service's calls to the table service, as its service identity, with a
token that stays fresh.

Services run for weeks; their tokens live `KOZYR_JWT_TTL_SECONDS`. A new one is minted
when half of the current one's life is gone, so no call ever carries an expired token.
The subject names the service: the table service recognises the bots by theirs
(`kozyr.runtime.auth.BOTS_SUBJECT`) and holds them to computer seats.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta

import grpc

from kozyr.client.table import TableClient
from kozyr.runtime.auth import AUTHORIZATION_KEY, Role, TokenMinter


class ServiceCaller:
    """A `TableClient` acting as the service `subject`."""

    def __init__(
        self,
        target: str,
        minter: TokenMinter,
        ttl_seconds: float,
        subject: str,
        *,
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self._minter = minter
        self._ttl = ttl_seconds
        self._subject = subject
        self._minted_at = time.monotonic()
        self.client = TableClient(
            target, self._mint(), interceptors=interceptors, credentials=credentials
        )

    def _mint(self) -> str:
        return self._minter.mint(self._subject, Role.SERVICE, ttl=timedelta(seconds=self._ttl))

    @property
    def table(self) -> TableClient:
        """The client, its token renewed when half of its lifetime has passed."""
        now = time.monotonic()
        if now - self._minted_at > self._ttl / 2:
            self._minted_at = now
            others = [(k, v) for k, v in self.client.metadata if k != AUTHORIZATION_KEY]
            self.client.metadata = (*others, (AUTHORIZATION_KEY, f"Bearer {self._mint()}"))
        return self.client

    async def close(self) -> None:
        await self.client.close()
