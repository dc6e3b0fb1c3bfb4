"""From `kozyr play`'s options to a table id, through matchmaking.

Four ways: straight to a known table (`--table`); the game's queue (`EnterQueue`, then
`WatchTicket` until matched); a private table for the player alone, computers in the
free seats (`CreatePrivateTable`); and parties — the host creates one and shares its
code, friends join with it, and the host starts (the queue, or a private table). A
player already seated at an unfinished table is sent back to it (`ALREADY_SEATED`),
which is also how a restarted client finds its game again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

import grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.cli.play.session import error_text
from kozyr.cli.play.texts import join_command, label
from kozyr.client import MatchmakingClient
from kozyr.games.catalogue import UnknownGame, game_words, plugin_by_word
from kozyr.runtime.errors import error_details
from kozyr.texts import Lang

POLL_SECONDS = 1.0
"""How often a party member asks whether the leader has started."""

Say = Callable[[str], None]


class Mode(StrEnum):
    TABLE = "table"
    QUEUE = "queue"
    PRIVATE = "private"
    HOST = "host"
    JOIN = "join"


@dataclass(frozen=True)
class Plan:
    """What the player asked for on the command line."""

    game: games_pb2.Game.ValueType
    mode: Mode
    table_id: str = ""
    code: str = ""
    computers: bool = True
    level: int = 0
    private: bool = False
    """For a host: start a private table (else queue the party)."""


LEVELS = {"auto": 0, "easy": 1, "normal": 2, "hard": 3}
"""`--computers`: the level of the computers in a private table's free seats (auto: the
level that suits the player's rating); "none" keeps them out of the queue's tables."""


def make_plan(
    game: str,
    *,
    table_id: str | None = None,
    join: str | None = None,
    party: bool = False,
    private: bool = False,
    computers: str = "auto",
) -> Plan:
    """The plan of the command line's options; ValueError says which do not fit."""
    try:
        chosen = plugin_by_word(game)
    except UnknownGame:
        raise ValueError(f"--game is {game_words()}, not {game!r}") from None
    if computers != "none" and computers not in LEVELS:
        raise ValueError(f"--computers is one of {', '.join([*LEVELS, 'none'])}, not {computers!r}")
    ways = [
        name for name, on in (("--table", table_id), ("--join", join), ("--party", party)) if on
    ]
    if len(ways) > 1:
        raise ValueError(f"choose one of {', '.join(ways)}")
    if private and (table_id or join):
        raise ValueError("--private opens a new table: not with --table or --join")
    if computers == "none" and private:
        raise ValueError(
            "a private table fills its free seats with computers: not with --computers none"
        )
    plan = Plan(
        game=chosen.code,  # type: ignore[arg-type]  # an open enum: any registered game
        mode=Mode.PRIVATE if private else Mode.QUEUE,
        computers=computers != "none",
        level=LEVELS.get(computers, 0),
    )
    if table_id:
        return replace(plan, mode=Mode.TABLE, table_id=table_id)
    if join:
        return replace(plan, mode=Mode.JOIN, code=join)
    if party:
        return replace(plan, mode=Mode.HOST, private=private)
    return plan


class LobbyError(Exception):
    """Matchmaking refused or ended the search: the text says why, in the player's
    language."""


async def find_table(
    mm: MatchmakingClient, plan: Plan, lang: Lang, say: Say, start: asyncio.Event
) -> str:
    """The table id to play at. `say` shows progress; `start` is set when the host
    starts his party's game."""
    if plan.mode is Mode.TABLE:
        return plan.table_id
    try:
        if plan.mode is Mode.QUEUE:
            return await _queue(mm, plan, lang, say, party_id="")
        if plan.mode is Mode.PRIVATE:
            return await _private(mm, plan)
        if plan.mode is Mode.HOST:
            return await _host(mm, plan, lang, say, start)
        return await _join(mm, plan, lang, say)
    except grpc.aio.AioRpcError as err:
        seated = error_details(err).metadata.get("tableId")
        if error_details(err).reason == "ALREADY_SEATED" and seated:
            return seated
        raise LobbyError(error_text(err, lang)) from None


async def _queue(mm: MatchmakingClient, plan: Plan, lang: Lang, say: Say, party_id: str) -> str:
    try:
        ticket = (
            await mm.enter_queue(plan.game, party_id=party_id, fill_with_computers=plan.computers)
        ).ticket_id
    except grpc.aio.AioRpcError as err:
        queued = error_details(err).metadata.get("ticketId")
        if error_details(err).reason != "ALREADY_QUEUED" or not queued:
            raise
        ticket = queued
    return await _until_matched(mm, ticket, lang, say)


async def _until_matched(mm: MatchmakingClient, ticket_id: str, lang: Lang, say: Say) -> str:
    last = mm_pb.TICKET_STATE_UNSPECIFIED
    async for state in mm.watch_ticket(ticket_id):
        last = state.state
        if state.state == mm_pb.TICKET_STATE_MATCHED:
            return state.table_id
        if state.state == mm_pb.TICKET_STATE_PLACING:
            say(label("placing", lang))
        elif state.state == mm_pb.TICKET_STATE_SEARCHING:
            say(label("searching", lang))
        else:
            break
    raise LobbyError(label("ticket_over", lang, state=mm_pb.TicketState.Name(last)))


async def _private(mm: MatchmakingClient, plan: Plan) -> str:
    options = table_pb.TableOptions(computer_level=plan.level)  # type: ignore[arg-type]
    answer = await mm.create_private_table(plan.game, fill_with_computers=True, table=options)
    return answer.table_id


async def _host(
    mm: MatchmakingClient, plan: Plan, lang: Lang, say: Say, start: asyncio.Event
) -> str:
    """Create a party, show its code until the host starts, then play."""
    party = await mm.create_party()
    waiting = asyncio.create_task(start.wait())
    while not waiting.done():
        current = await mm.party() or party
        say(
            label(
                "party_code",
                lang,
                code=party.code,
                join=join_command(party.code),
                players=len(current.player_ids),
            )
        )
        await asyncio.wait({waiting}, timeout=POLL_SECONDS)
    if plan.private:
        return await _private(mm, plan)
    return await _queue(mm, plan, lang, say, party_id=party.party_id)


async def _join(mm: MatchmakingClient, plan: Plan, lang: Lang, say: Say) -> str:
    """Join a party by its code and wait for the table its leader starts."""
    party = await mm.join_party(plan.code)
    say(label("party_joined", lang, code=party.code))
    while True:
        current = await mm.party()
        if current is not None and current.ticket_id:
            return await _until_matched(mm, current.ticket_id, lang, say)
        for table in await mm.my_tables():
            if not table.finished:
                return table.table_id
        await asyncio.sleep(POLL_SECONDS)
