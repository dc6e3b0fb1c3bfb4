"""The clock's calls to the table service, as a service identity whose token stays fresh.

The clock runs for weeks; its tokens live `KOZYR_JWT_TTL_SECONDS`. A new one is minted
when half of the current one's life is gone, so no call ever carries an expired token.
"""

from __future__ import annotations

import time
from datetime import timedelta

from kozyr.client import TableClient
from kozyr.runtime.auth import AUTHORIZATION_KEY, Role, TokenMinter

SERVICE_SUBJECT = "clock"
CALL_SECONDS = 4.0
"""A call to the table service is given up after this (and the timer redelivered): less
than the consumers' ack_wait, so a hung table service never holds a timer longer than
JetStream would before handing it to another replica."""


class TableCaller:
    """A `TableClient` acting as the clock service."""

    def __init__(self, target: str, minter: TokenMinter, ttl_seconds: float) -> None:
        self._minter = minter
        self._ttl = ttl_seconds
        self._minted_at = time.monotonic()
        self.client = TableClient(target, self._mint())

    def _mint(self) -> str:
        return self._minter.mint(SERVICE_SUBJECT, Role.SERVICE, ttl=timedelta(seconds=self._ttl))

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
