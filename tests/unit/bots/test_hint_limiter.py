"""The hints' token buckets: a burst, then the rate; players apart; full buckets forgotten."""

from __future__ import annotations

import pytest

from kozyr.bots import limiter
from kozyr.bots.limiter import TokenBuckets


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_with_the_wait_until_the_next_token() -> None:
    clock = FakeClock()
    buckets = TokenBuckets(2.0, 3, now=clock)
    assert [buckets.take("ana") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("ana") == pytest.approx(0.5)
    clock.now += 0.25
    assert buckets.take("ana") == pytest.approx(0.25), "a refused call takes nothing"
    clock.now += 0.25
    assert buckets.take("ana") == 0.0
    assert buckets.take("ana") == pytest.approx(0.5)
    clock.now += 60
    assert [buckets.take("ana") for _ in range(4)][-2:] == [0.0, pytest.approx(0.5)]


def test_players_have_their_own_buckets() -> None:
    buckets = TokenBuckets(1.0, 1, now=FakeClock())
    assert buckets.take("ana") == 0.0
    assert buckets.take("ana") > 0
    assert buckets.take("bogdan") == 0.0


def test_full_buckets_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limiter, "PRUNE_EVERY", 10)
    clock = FakeClock()
    buckets = TokenBuckets(1.0, 5, now=clock)
    for player in range(9):
        buckets.take(f"p{player}")
    clock.now += 10  # every bucket refilled
    buckets.take("busy")
    assert len(buckets) == 1


def test_a_bucket_needs_a_rate_and_a_burst() -> None:
    with pytest.raises(ValueError, match="rate"):
        TokenBuckets(0, 1)
    with pytest.raises(ValueError, match="burst"):
        TokenBuckets(1, 0)
