"""`TableNotifier`: a newer version wakes every watcher of its table once, an older one
or another table's none; a watcher that leaves (its stream cancelled) ends no other
watcher's wait; the last watcher gone, the table is forgotten."""

from __future__ import annotations

import asyncio

from kozyr.table.adapters.notifier import TableNotifier


async def test_a_newer_version_wakes_every_waiting_watcher_and_an_older_one_none() -> None:
    notifier = TableNotifier()
    with notifier.watching("t") as first, notifier.watching("t") as second:
        assert first is second, "the watchers of one table share its watch"
        first.hear(5)
        waiting = first.changed()
        notifier.notify("t", 5)
        notifier.notify("t", 4)
        notifier.notify("other", 9)
        assert not waiting.is_set(), "no newer version of this table"
        notifier.notify("t", 6)
        assert waiting.is_set()
        assert first.heard == 6
        later = first.changed()
        assert later is not waiting, "the next version has a signal of its own"
        notifier.notify("t", 6)
        assert not later.is_set(), "a version is heard once"


async def test_a_cancelled_watcher_ends_no_other_wait() -> None:
    notifier = TableNotifier()
    with notifier.watching("t") as watch, notifier.watching("t"):
        staying = asyncio.ensure_future(watch.changed().wait())
        leaving = asyncio.ensure_future(watch.changed().wait())
        await asyncio.sleep(0)  # both wait
        leaving.cancel()
        await asyncio.sleep(0)
        assert leaving.cancelled()
        assert not staying.done(), "the other watcher still waits"
        notifier.notify("t", 1)
        assert await asyncio.wait_for(staying, 1)


async def test_wake_all_wakes_every_table_and_the_last_watcher_forgets_it() -> None:
    notifier = TableNotifier()
    with notifier.watching("t") as t, notifier.watching("u") as u:
        signals = [t.changed(), u.changed()]
        assert sorted(notifier.watched()) == ["t", "u"]
        notifier.wake_all()
        assert all(signal.is_set() for signal in signals)
    assert notifier.watched() == []
    notifier.notify("t", 3)  # an unwatched table costs nothing and keeps nothing
    assert notifier.watched() == []
