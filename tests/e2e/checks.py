"""The assertions every played game must pass, shared by the e2e test modules."""

from __future__ import annotations

from typing import Any

from kozyr.api.table.v1 import views_pb2
from tests.e2e.leaks import (
    THREE_FIVE_EIGHT,
    Seen,
    as_seen_by,
    find_leaks,
    history_gaps,
    seen_history,
    seen_refusal,
    seen_view,
)
from tests.e2e.moderation import kozyr_cli
from tests.e2e.players import SeatLog
from tests.e2e.published import published_events, stored_events, wait_until_relayed
from tests.e2e.tables import PlayedGame


def watch_problems(log: SeatLog) -> list[str]:
    """Each watch call resumes at the last version seen; versions only ever grow."""
    problems = []
    last = 0
    for number, connection in enumerate(log.connections, 1):
        if connection.from_version != last:
            problems.append(f"watch #{number} resumed from {connection.from_version}, saw {last}")
        for version in connection.versions:
            if version <= last:
                problems.append(f"watch #{number} sent version {version} after {last}")
            last = max(last, version)
    if not log.watch_views or not log.watch_views[-1].finished:
        problems.append("the watch never delivered the finished table")
    return problems


def assert_watch_streams_clean(game: PlayedGame) -> None:
    problems = {log.player_id: watch_problems(log) for log in game.clients}
    assert not any(problems.values()), problems


def leaks_of(game: PlayedGame, log: SeatLog) -> list[str]:
    """Everything `log`'s client received, checked against the admin history."""
    seen = [seen_view(v, "watch") for v in log.watch_views]
    seen += [seen_view(v, "submit reply") for v in log.submit_views]
    seen += [seen_history(e) for e in log.history]
    seen += [seen_refusal(r.acted_on, r.texts, r.reason) for r in log.refusals]
    problems = find_leaks(game.game, game.admin_history, log.seat, seen)
    problems += history_gaps(
        game.game, game.admin_history, log.seat, [e.version for e in log.history]
    )
    return problems


def assert_no_leaks(game: PlayedGame) -> None:
    for log in game.clients:
        assert log.history, f"{log.player_id} read no history"
        problems = leaks_of(game, log)
        assert not problems, f"seat {log.seat} ({len(problems)} problems): {problems[:20]}"


async def assert_history_reached_nats_once(game: PlayedGame) -> None:
    """JetStream holds every event of the table exactly once, in log order."""
    deployment = game.deployment
    await wait_until_relayed(deployment.database_url)
    published = await published_events(deployment.nats_url, deployment.subject_root, game.table_id)
    stored = await stored_events(deployment.database_url, game.table_id)
    admin = game.admin_history
    assert len(stored) == len(admin)
    assert len(published) == len(admin), f"{len(published)} messages for {len(admin)} events"
    assert [p.event.position for p in published] == [e.version for e in admin]
    assert [p.event.type for p in published] == [e.type for e in admin]
    assert [p.event.data for p in published] == [e.data for e in admin]
    assert [p.msg_id for p in published] == [str(e.event_id) for e in stored]
    assert [str(p.event.event_id) for p in published] == [str(e.event_id) for e in stored]
    assert len({p.msg_id for p in published}) == len(published), "a duplicate Nats-Msg-Id"
    assert [p.event.hash for p in published] == [e.hash for e in stored]
    root = f"{deployment.subject_root}.table.{game.table_id}"
    assert [p.subject for p in published] == [f"{root}.{e.type}" for e in admin]
    sequences = [p.stream_sequence for p in published]
    assert sequences == sorted(set(sequences)), "stream order differs from log order"
    assert all(p.delivered == 1 for p in published)


def expected_result(game: str, final: views_pb2.TableView) -> dict[str, Any]:
    """The final view's result in the shape of `game.result(state)` (what replay prints)."""
    if game == THREE_FIVE_EIGHT:
        result = final.three_five_eight.result
        return {
            "final": True,
            "deals_played": final.three_five_eight.deal_number,
            "totals": list(result.totals),
            "places": list(result.places),
            "winners": list(result.winners),
        }
    view = final.khozor_teams
    return {
        "wins": dict(view.wins),
        "winner": view.match_winner,
        "rounds": [{"round": r.round, "team": r.team, "seat": r.seat} for r in view.round_winners],
    }


def _replayed_steps(replay: dict[str, Any]) -> list[Seen]:
    """Every step of a seat's replay, to be judged like that seat's history."""
    steps = [*replay["opening"], *replay["ending"]]
    for deal in replay["deals"]:
        steps += [deal["start"], *deal["steps"]]
    return [
        Seen(
            "history",
            s["position"],
            {"type": s["type"], "data": s["data"]},
            f"replay #{s['position']}",
        )
        for s in steps
    ]


async def assert_moderator_tools_agree(game: PlayedGame, seat: int = 1) -> None:
    """`kozyr replay` tells the result the players saw, `kozyr verify` passes, and a
    seat's replay shows no more than that seat may know."""
    url = game.deployment.database_url
    # One after another: each process is CPU-bound (mostly its imports), so three at
    # once finish no sooner on two cores, and each one's guard (CLI_TIMEOUT) would
    # measure its siblings' work too — under a load of ~20 that failed it.
    replayed = await kozyr_cli(url, "replay", game.table_id, "--json")
    verified = await kozyr_cli(url, "verify", game.table_id, "--json")
    seat_replayed = await kozyr_cli(url, "replay", game.table_id, "--seat", str(seat), "--json")
    final = game.admin_final
    assert replayed.exit_code == 0, replayed.stderr
    replay = replayed.json()
    assert replay["over"] is True
    assert replay["version"] == game.admin_history[-1].version
    assert final.version == as_seen_by(game.game, game.admin_history, None)[-1].version
    assert replay["seats"] == game.players
    assert replay["result"] == expected_result(game.game, final)
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    report = verified.json()
    assert report["ok"] is True, report["problem"]
    assert report["chain"]["ok"] is True
    assert report["events"] == len(game.admin_history)
    assert report["over"] is True
    assert report["result"] == replay["result"]
    assert report["deals_rederived"] == report["seeds_revealed"] == len(replay["deals"])
    assert report["seeds_checked"] >= report["deals_rederived"]
    assert seat_replayed.exit_code == 0, seat_replayed.stderr
    seat_replay = seat_replayed.json()
    assert seat_replay["seat"] == seat
    assert seat_replay["result"] == replay["result"]
    steps = _replayed_steps(seat_replay)  # numbered by the log, as moderators see it
    leaks = find_leaks(game.game, game.admin_history, seat, steps, log_numbers=True)
    assert not leaks, leaks[:20]
