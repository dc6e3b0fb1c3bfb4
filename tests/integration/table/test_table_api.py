"""The table service's gRPC API against real PostgreSQL, NATS and sockets."""

from __future__ import annotations

import asyncio
import hashlib
import urllib.request

import grpc
import pytest

from kozyr.api.common.v1 import cards_pb2, games_pb2, language_pb2, seats_pb2
from kozyr.api.table.v1 import actions_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.infra import free_port
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table.service import TableService
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]


async def _new_358(target: str) -> str:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)
        return created.table_id


async def _expect(code: grpc.StatusCode, call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == code, caught.value.details()
    return caught.value


async def test_each_seat_sees_its_own_view_and_the_turn(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    for seat, player in enumerate(PLAYERS):
        async with TableClient(table_service.target, token(player)) as client:
            view = await client.get_table(table_id)
        assert view.seat == seat
        assert view.version >= 3  # created, first dealer drawn, first deal dealt
        assert view.three_five_eight.hand, "a seated player sees his first six cards"
        assert len(view.three_five_eight.hand) == 6
        acting = seat in view.turn.seats
        assert bool(view.legal_actions) == acting
        assert view.turn.HasField("deadline")
    async with TableClient(table_service.target, token("stranger")) as spectator:
        view = await spectator.get_table(table_id)
    assert not view.HasField("seat")
    assert not view.three_five_eight.hand


async def test_auth_is_enforced(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    async with TableClient(table_service.target, None) as anonymous:
        await _expect(grpc.StatusCode.UNAUTHENTICATED, anonymous.get_table(table_id))
    async with TableClient(table_service.target, token("ana")) as ana:
        await _expect(
            grpc.StatusCode.PERMISSION_DENIED,
            ana.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS),
        )
        await _expect(grpc.StatusCode.PERMISSION_DENIED, ana.expire_turn(table_id, 1))
        await _expect(grpc.StatusCode.PERMISSION_DENIED, ana.get_table(table_id, seat=1))
        view = await ana.get_table(table_id)
        other = (view.seat + 1) % 3
        error = await _expect(
            grpc.StatusCode.PERMISSION_DENIED,
            ana.submit(table_id, _any_contract(), seat=other),
        )
        assert error_details(error).reason == "NOT_YOUR_SEAT"
    async with TableClient(table_service.target, token("stranger")) as stranger:
        error = await _expect(
            grpc.StatusCode.PERMISSION_DENIED, stranger.submit(table_id, _any_contract())
        )
        assert error_details(error).reason == "NOT_SEATED"


def _any_contract() -> actions_pb2.Action:
    return actions_pb2.Action(
        choose_contract=actions_pb2.ChooseContract(contract=actions_pb2.CONTRACT_SPADES)
    )


async def _declarer(target: str, table_id: str) -> tuple[str, int]:
    async with TableClient(target, token("ana")) as ana:
        view = await ana.get_table(table_id)
    seat = view.turn.seats[0]
    return PLAYERS[seat], seat


async def test_errors_are_typed_and_localised(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    declarer, seat = await _declarer(table_service.target, table_id)
    waiting = PLAYERS[(seat + 1) % 3]
    async with TableClient(table_service.target, token(waiting), language="ro") as client:
        before = await client.get_table(table_id)
        error = await _expect(
            grpc.StatusCode.FAILED_PRECONDITION, client.submit(table_id, _any_contract())
        )
        details = error_details(error)
        assert details.reason == "NOT_YOUR_TURN"
        assert next(iter(details.messages)) == "ro", "the caller's language comes first"
        assert details.messages["ro"] == "Nu este rândul tău."
        assert set(details.messages) == {"en", "ro", "it"}
        await _expect(
            grpc.StatusCode.NOT_FOUND,
            client.get_table("00000000-0000-0000-0000-000000000000"),
        )
        await _expect(grpc.StatusCode.INVALID_ARGUMENT, client.get_table("not-a-table"))
        bad_card = actions_pb2.Action(
            play_card=actions_pb2.PlayCard(card=cards_pb2.Card(code="ZZ"))
        )
        await _expect(grpc.StatusCode.INVALID_ARGUMENT, client.submit(table_id, bad_card))
        await _expect(
            grpc.StatusCode.INVALID_ARGUMENT, client.submit(table_id, actions_pb2.Action())
        )
        after = await client.get_table(table_id)
    assert after.version == before.version
    async with TableClient(table_service.target, token(waiting)) as client:
        request = pb.SubmitActionRequest(
            table_id=table_id,
            request_id="it-please",
            action=_any_contract(),
            language=language_pb2.LANGUAGE_IT,
        )
        error = await _expect(
            grpc.StatusCode.FAILED_PRECONDITION,
            client.stub.SubmitAction(request, metadata=client.metadata),
        )
        assert next(iter(error_details(error).messages)) == "it"
        assert error_details(error).messages["it"] == "Non è il tuo turno."
    async with TableClient(table_service.target, token(declarer)) as client:
        await _expect(
            grpc.StatusCode.ABORTED,
            client.submit(table_id, _any_contract(), expected_version=before.version - 1),
        )
        assert (await client.get_table(table_id)).version == before.version


async def test_one_of_twenty_concurrent_moves_for_a_turn_applies(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_358(table_service.target)
    declarer, _ = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token(declarer)) as client:
        before = await client.get_table(table_id)
        results = await asyncio.gather(
            *(client.submit(table_id, _any_contract()) for _ in range(20)),
            return_exceptions=True,
        )
        applied = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
        assert len(applied) == 1
        assert len(refused) == 19
        assert {e.code() for e in refused} == {grpc.StatusCode.FAILED_PRECONDITION}
        history = await client.history(table_id)
    chosen = [e for e in history if e.type == "ContractChosen"]
    assert len(chosen) == 1
    assert history[-1].version > before.version


async def test_a_repeated_request_id_appends_nothing(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    declarer, _ = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token(declarer)) as client:
        first = await client.submit(table_id, _any_contract(), request_id="once")
        again = await asyncio.gather(
            *(client.submit(table_id, _any_contract(), request_id="once") for _ in range(5))
        )
        assert not first.duplicate
        assert all(r.duplicate for r in again)
        assert all(r.view.version == first.view.version for r in again)
        assert (await client.get_table(table_id)).version == first.view.version


async def test_expire_turn_plays_the_default_move_once(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    async with TableClient(table_service.target, token("clock", Role.SERVICE)) as clock:
        view = await clock.get_table(table_id)
        turn = view.turn.number
        results = await asyncio.gather(*(clock.expire_turn(table_id, turn) for _ in range(5)))
        assert sum(r.applied for r in results) == 1
        after = await clock.get_table(table_id)
        assert after.turn.number > turn
        assert after.three_five_eight.contract == "S", "the default contract: the first unused, ♠"
        stale = await clock.expire_turn(table_id, turn)
        assert not stale.applied
        assert stale.version == after.version


async def test_seat_control_and_retake(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    declarer, seat = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token("clock", Role.SERVICE)) as clock:
        changed = await clock.set_seat_control(table_id, seat, seats_pb2.SEAT_CONTROL_COMPUTER)
        assert changed.changed
        same = await clock.set_seat_control(table_id, seat, seats_pb2.SEAT_CONTROL_COMPUTER)
        assert not same.changed
        view = await clock.get_table(table_id)
        assert view.seats[seat].control == seats_pb2.SEAT_CONTROL_COMPUTER
        # A service may act for a computer-covered seat, not for a person's.
        other = (seat + 1) % 3
        await _expect(
            grpc.StatusCode.PERMISSION_DENIED, clock.submit(table_id, _any_contract(), seat=other)
        )
    async with TableClient(table_service.target, token(declarer)) as player:
        response = await player.submit(table_id, _any_contract())
    assert response.view.seats[seat].control == seats_pb2.SEAT_CONTROL_PERSON


async def test_watch_resumes_without_gap_or_duplicate(table_service: RunningTableService) -> None:
    table_id = await _new_358(table_service.target)
    declarer, _ = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token(declarer)) as client:
        stream = client.watch(table_id)
        first = await anext(stream)
        submitted = await client.submit(table_id, _any_contract())
        second = await anext(stream)
        assert second.version == submitted.view.version > first.version
        await stream.aclose()
        resumed = client.watch(table_id, from_version=second.version)
        clock = TableClient(table_service.target, token("clock", Role.SERVICE))
        expired = await clock.expire_turn(table_id, second.turn.number)
        await clock.close()
        assert expired.applied
        third = await anext(resumed)
        assert third.version == expired.version
        await resumed.aclose()


async def test_a_request_id_reused_for_another_move_is_refused(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_358(table_service.target)
    declarer, _ = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token(declarer)) as client:
        first = await client.submit(table_id, _any_contract(), request_id="mine")
        other = actions_pb2.Action(
            choose_contract=actions_pb2.ChooseContract(contract=actions_pb2.CONTRACT_HEARTS)
        )
        error = await _expect(
            grpc.StatusCode.INVALID_ARGUMENT, client.submit(table_id, other, request_id="mine")
        )
        assert error_details(error).reason == "REQUEST_ID_REUSED"
        assert (await client.get_table(table_id)).version == first.view.version


async def test_a_covered_player_acts_at_his_version_and_retakes_the_seat(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_358(table_service.target)
    declarer, seat = await _declarer(table_service.target, table_id)
    async with TableClient(table_service.target, token("clock", Role.SERVICE)) as clock:
        await clock.set_seat_control(table_id, seat, seats_pb2.SEAT_CONTROL_ABSENT)
    async with TableClient(table_service.target, token(declarer)) as player:
        view = await player.get_table(table_id)
        assert view.seats[seat].control == seats_pb2.SEAT_CONTROL_ABSENT
        done = await player.submit(table_id, _any_contract(), expected_version=view.version)
    assert done.view.seats[seat].control == seats_pb2.SEAT_CONTROL_PERSON
    assert done.view.three_five_eight.contract == "S"


async def test_a_signal_neither_restarts_the_clock_nor_shows_to_the_other_team(
    table_service: RunningTableService,
) -> None:
    """Looked at from every seat, 0 included (every number of every seat, streams
    too, is tests/integration/table/test_signals.py's)."""
    players = [f"p{i}" for i in range(8)]
    signaller = None
    for attempt in range(10):  # a deal where nobody holds a set is rare (< 1 %)
        async with TableClient(table_service.target, token("mm", Role.SERVICE)) as service:
            created = await service.create_table(
                games_pb2.GAME_KHOZOR_TEAMS, players, request_id=f"signals-{attempt}"
            )
        table_id = created.table_id
        for seat, player in enumerate(players):
            async with TableClient(table_service.target, token(player)) as client:
                view = await client.get_table(table_id)
            toggles = [a for a in view.legal_actions if a.WhichOneof("action") == "toggle_signal"]
            if toggles:
                signaller = (seat, player, toggles[0], view)
                break
        if signaller is not None:
            break
    assert signaller is not None, "ten deals without a single set"
    seat, player, signal, before = signaller
    async with TableClient(table_service.target, token(player)) as client:
        after = (await client.submit(table_id, signal)).view
    assert after.version > before.version
    for viewer, name in enumerate(players):
        async with TableClient(table_service.target, token(name)) as client:
            view = await client.get_table(table_id)
        assert view.turn.number == before.turn.number, viewer
        assert view.turn.deadline == before.turn.deadline, "a signal never restarts a clock"
        shown = {s.seat for s in view.khozor_teams.signals if s.three_set or s.five_set}
        if viewer % 2 == seat % 2:
            assert shown == {seat}, f"seat {viewer} is of the signaller's team: it sees it"
        else:
            assert shown == set(), f"seat {viewer} is of the other team"
            assert seat not in {s.seat for s in view.khozor_teams.signals}, viewer


async def test_an_unreachable_database_is_unavailable_not_internal(
    table_service: RunningTableService,
) -> None:
    settings = table_service.service.settings.model_copy(
        update={"database_url": f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/none"}
    )
    broken = TableService(settings)
    port = await broken.server.start()
    try:
        async with TableClient(f"127.0.0.1:{port}", token("ana")) as client:
            error = await _expect(
                grpc.StatusCode.UNAVAILABLE,
                client.get_table("00000000-0000-0000-0000-000000000000"),
            )
        assert error_details(error).reason == "STORE_UNAVAILABLE"
    finally:
        await broken.server.stop(0)


async def test_metrics_count_commands_and_relay_lag(table_service: RunningTableService) -> None:
    port = table_service.service.server.metrics_port
    assert port is not None

    def scrape() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            return str(page.read().decode())

    def created_count(text: str) -> float:
        prefix = 'kozyr_table_commands_total{game="three_five_eight",kind="create"} '
        lines = [line for line in text.splitlines() if line.startswith(prefix)]
        return float(lines[0].removeprefix(prefix)) if lines else 0.0

    before = created_count(await asyncio.to_thread(scrape))
    await _new_358(table_service.target)
    text = await asyncio.to_thread(scrape)
    assert created_count(text) == before + 1
    assert "kozyr_outbox_backlog_events" in text
    assert 'kozyr_grpc_server_handled_total{grpc_code="OK"' in text


async def test_two_replicas_serve_one_table_correctly(table_service: RunningTableService) -> None:
    """Replica B's cached table is behind after replica A's move: the log decides."""
    replica = TableService(table_service.service.settings)
    port = await replica.start()
    try:
        table_id = await _new_358(table_service.target)
        declarer, _ = await _declarer(table_service.target, table_id)
        other_target = f"127.0.0.1:{port}"
        async with TableClient(other_target, token(declarer)) as on_b:
            stale = await on_b.get_table(table_id)  # B now caches this version
        async with TableClient(table_service.target, token(declarer)) as on_a:
            moved = await on_a.submit(table_id, _any_contract())
        assert moved.view.version > stale.version
        next_seat = moved.view.turn.seats[0]
        async with TableClient(other_target, token(PLAYERS[next_seat])) as on_b:
            view = await on_b.get_table(table_id)
            assert view.version == moved.view.version, "reads come from the log"
            done = await on_b.submit(table_id, view.legal_actions[0], expected_version=view.version)
            assert done.view.version > view.version
        # Now A's cache is behind: its next move is decided against the log.
        after_b = done.view
        mover_seat = after_b.turn.seats[0]
        async with TableClient(other_target, token("bot", Role.SERVICE)) as reader_on_b:
            mine = await reader_on_b.get_table(table_id, seat=mover_seat)
        async with TableClient(table_service.target, token(PLAYERS[mover_seat])) as on_a:
            result = await on_a.submit(table_id, mine.legal_actions[0])
        assert result.view.version > after_b.version
    finally:
        await replica.stop(0)


async def test_views_carry_each_deals_commitment_then_its_seed(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_358(table_service.target)
    async with (
        TableClient(table_service.target, token("clock", Role.SERVICE)) as clock,
        TableClient(table_service.target, token("ana")) as ana,
    ):
        view = await ana.get_table(table_id)
        assert [d.number for d in view.deals] == [1]
        first = view.deals[0]
        assert len(first.commitment) == 64
        assert not first.seed, "the seed stays secret while the deal is played"
        for _ in range(200):  # one deal is ~55 decisions; the clock plays them all
            view = await ana.get_table(table_id)
            if len(view.deals) > 1:
                break
            await clock.expire_turn(table_id, view.turn.number)
        assert len(view.deals) == 2, "the second deal was dealt"
    revealed, current = view.deals
    assert revealed.commitment == first.commitment
    assert hashlib.sha256(bytes.fromhex(revealed.seed)).hexdigest() == revealed.commitment
    assert not current.seed
    assert current.commitment != revealed.commitment


async def test_create_table_is_idempotent_and_refuses_a_reused_request_id(
    table_service: RunningTableService,
) -> None:
    async with TableClient(table_service.target, token("mm", Role.SERVICE)) as service:
        first = await service.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, request_id="table-7"
        )
        again = await service.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, request_id="table-7"
        )
        assert again.table_id == first.table_id
        assert again.version == first.version
        error = await _expect(
            grpc.StatusCode.INVALID_ARGUMENT,
            service.create_table(
                games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", "bogdan", None], request_id="table-7"
            ),
        )
        assert error_details(error).reason == "REQUEST_ID_REUSED"
        view = await service.get_table(first.table_id)
    assert [s.player_id for s in view.seats] == PLAYERS


async def test_a_presence_flip_between_read_and_move_leaves_the_pin_valid(
    table_service: RunningTableService,
) -> None:
    """Issue 26: the clock records a seat going offline and back between the mover's
    read and his pinned move: the move is applied. A move in between makes the next
    pin from that read STALE_VERSION, with the seat's version now."""
    table_id = await _new_358(table_service.target)
    async with TableClient(table_service.target, token("clock", Role.SERVICE)) as clock:
        admin = await clock.get_table(table_id)
        mover = admin.turn.seats[0]
        clients = {p: TableClient(table_service.target, token(p)) for p in PLAYERS}
        try:
            read = await clients[PLAYERS[mover]].get_table(table_id)
            other = (mover + 1) % 3
            for online in (False, True):
                flipped = await clock.set_seat_presence(table_id, other, online)
                assert flipped.changed
            moved = await clients[PLAYERS[mover]].submit(
                table_id, read.legal_actions[0], expected_version=read.version
            )
            assert moved.view.version > read.version + 2
            nxt = moved.view.turn.seats[0]
            late = await clients[PLAYERS[nxt]].get_table(table_id)
            await clock.set_seat_presence(table_id, other, False)
            error = await _expect(
                grpc.StatusCode.ABORTED,
                clients[PLAYERS[nxt]].submit(
                    table_id, late.legal_actions[0], expected_version=read.version
                ),
            )
            details = error_details(error)
            assert details.reason == "STALE_VERSION"
            assert details.metadata["currentVersion"] == str(late.version + 1)
        finally:
            for client in clients.values():
                await client.close()
