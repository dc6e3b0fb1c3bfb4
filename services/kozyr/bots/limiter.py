"""A token bucket per player: how often one player may ask for a hint.

A hint costs the bots service a read of the table and a decision, so a client app's
"hint" button held down must not become a load test. Each player has a bucket of
`burst` tokens refilled at `rate` per second; a call takes one or is refused with the
time until the next one is there. The buckets live in the replica (a player whose calls
are spread over n replicas gets up to n times the rate — still bounded), and a bucket
that has filled up again is forgotten, so memory follows the players asking now.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

PRUNE_EVERY = 1024
"""Forget full buckets after this many new players (each bucket is a few dozen bytes)."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """`take(key)` → 0.0 when allowed, else the seconds to wait before the next token."""

    def __init__(
        self, rate: float, burst: int, *, now: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst ≥ 1")
        self.rate = rate
        self.burst = burst
        self._now = now
        self._buckets: dict[str, _Bucket] = {}
        self._new_since_prune = 0

    def take(self, key: str) -> float:
        now = self._now()
        bucket = self._buckets.get(key)
        if bucket is None:
            self._forget_full(now)
            bucket = self._buckets[key] = _Bucket(float(self.burst), now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    def __len__(self) -> int:
        return len(self._buckets)

    def _forget_full(self, now: float) -> None:
        self._new_since_prune += 1
        if self._new_since_prune < PRUNE_EVERY:
            return
        self._new_since_prune = 0
        full = [
            key
            for key, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.at) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
