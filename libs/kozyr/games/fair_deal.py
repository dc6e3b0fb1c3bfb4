"""Provably fair shuffles: a deck order as a pure function of a 32-byte seed.

The algorithm is language-neutral and specified in docs/fair-deal.md so that anyone
can re-derive a deal without our code:

* A byte stream: block k (k = 0, 1, 2, ...) is SHA-256(seed ‖ k as 8-byte big-endian);
  the blocks are concatenated and read 4 bytes at a time as big-endian unsigned ints.
* Fisher–Yates from the end: for i = n-1 down to 1, draw j uniformly in [0, i] by
  rejection sampling — take the next uint32 r; with m = i + 1 and
  limit = 2^32 - (2^32 mod m), reject r >= limit and draw again; else j = r mod m —
  then swap positions i and j.
* The commitment published before the deal is SHA-256(seed), lowercase hex.

Chance in the rules is always a seed carried by a command; the rules never draw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

SEED_BYTES = 32
_U32 = 1 << 32


class SeedError(ValueError):
    """A seed that is not exactly 32 bytes."""


def _check(seed: bytes) -> None:
    if len(seed) != SEED_BYTES:
        raise SeedError(f"a seed is {SEED_BYTES} bytes, got {len(seed)}")


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: SHA-256(seed) as lowercase hex."""
    _check(seed)
    return hashlib.sha256(seed).hexdigest()


def _uint32_stream(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        for offset in range(0, 32, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")
        counter += 1


class SeededDraws:
    """Uniform integer draws from a seed's SHA-256 stream (rejection sampling)."""

    def __init__(self, seed: bytes) -> None:
        _check(seed)
        self._stream = _uint32_stream(seed)

    def below(self, m: int) -> int:
        """A uniform integer in [0, m)."""
        if m <= 0:
            raise ValueError("m must be positive")
        limit = _U32 - (_U32 % m)
        while True:
            r = next(self._stream)
            if r < limit:
                return r % m


def shuffle(items: Sequence[T], seed: bytes) -> tuple[T, ...]:
    """The seed's permutation of `items` (Fisher–Yates, see the module docstring)."""
    draws = SeededDraws(seed)
    order = list(items)
    for i in range(len(order) - 1, 0, -1):
        j = draws.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def draw_index(seed: bytes, m: int) -> int:
    """One uniform choice in [0, m) from a seed: the first draw of its stream.

    Used for chance that is not a shuffle (the first dealer, the opening team).
    """
    return SeededDraws(seed).below(m)
