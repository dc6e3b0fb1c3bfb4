"""`verify` names the FIRST bad event of a forged stream, even when the forger re-hashed
the whole chain so that the store's own check passes. Each test changes one fact of a
real, honestly played game and expects the check (and position) that must catch it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kozyr.eventstore import VerifyFailure
from kozyr.eventstore.verification import verify_events
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table import audit
from kozyr.table.audit import Check
from tests.unit.table.test_audit_games import first, forged, played, rehashed

T358 = three_five_eight.GAME_ID
KHOZOR = khozor_teams.GAME_ID


def other_seed(seed_hex: str) -> str:
    return bytes(b ^ 0xFF for b in bytes.fromhex(seed_hex)).hex()


def expect(events: Any, chain: Any, position: int, check: Check, *words: str) -> audit.AuditReport:
    report = audit.verify(events, chain)
    assert not report.ok
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (position, check), report.problem
    for word in words:
        assert word in report.problem.reason
    assert f"FAILED at event #{position}" in report.to_text()
    assert report.to_dict()["problem"]["position"] == position
    return report


# ------------------------------------------------------------------ seeds and deals


@pytest.mark.parametrize(("game_id", "deal_type"), [(T358, "CardsDealt"), (KHOZOR, "RoundDealt")])
def test_a_changed_seed_no_longer_matches_its_commitment(game_id: str, deal_type: str) -> None:
    game = played(game_id)
    deal = first(game, deal_type, 2)

    def change(data: dict[str, Any]) -> None:
        data["seed"] = other_seed(data["seed"])

    events, chain = forged(game, deal.position, change)
    assert chain.ok  # the re-hashed chain alone does not notice
    expect(events, chain, deal.position, Check.SEED_COMMITMENT, deal.data["commitment"])


@pytest.mark.parametrize(("game_id", "deal_type"), [(T358, "CardsDealt"), (KHOZOR, "RoundDealt")])
def test_a_new_seed_with_its_own_commitment_does_not_give_the_recorded_deal(
    game_id: str, deal_type: str
) -> None:
    game = played(game_id)
    deal = first(game, deal_type, 3)
    seed = bytes(range(32))

    def change(data: dict[str, Any]) -> None:
        data["seed"], data["commitment"] = seed.hex(), audit.commitment_of(seed)

    events, chain = forged(game, deal.position, change)
    expect(events, chain, deal.position, Check.DEAL_MISMATCH, "seat 0", seed.hex())


def test_cards_moved_between_hands_are_not_the_deal_of_the_seed() -> None:
    game = played(T358)
    deal = first(game, "CardsDealt", 5)

    def swap(data: dict[str, Any]) -> None:
        hands = data["hands"]
        hands[0][0], hands[2][3] = hands[2][3], hands[0][0]

    events, chain = forged(game, deal.position, swap)
    report = expect(events, chain, deal.position, Check.DEAL_MISMATCH, "seat 0", "seat 2")
    assert report.problem is not None
    assert "seat 1" not in report.problem.reason


def test_a_changed_talon_is_not_the_deal_of_the_seed() -> None:
    game = played(T358)
    deal = first(game, "CardsDealt")

    def change(data: dict[str, Any]) -> None:
        data["talon"] = list(reversed(data["talon"]))

    events, chain = forged(game, deal.position, change)
    expect(events, chain, deal.position, Check.DEAL_MISMATCH, "talon")


@pytest.mark.parametrize("game_id", [T358, KHOZOR])
def test_a_revealed_seed_must_be_the_dealt_seed(game_id: str) -> None:
    game = played(game_id)
    reveal = first(game, "DealSeedRevealed", 2)

    def change(data: dict[str, Any]) -> None:
        data["seed"] = other_seed(data["seed"])

    events, chain = forged(game, reveal.position, change)
    expect(events, chain, reveal.position, Check.REVEAL_MISMATCH, "revealed seed")


def test_a_dropped_reveal_is_not_what_the_rules_record() -> None:
    game = played(T358)
    reveal = first(game, "DealSeedRevealed", 4)
    events = [e for e in game.copy_events() if e.position != reveal.position]
    renumbered = [dataclasses.replace(e, position=i) for i, e in enumerate(events, start=1)]
    forged_events, chain = rehashed(renumbered)
    expect(forged_events, chain, reveal.position, Check.NOT_FROM_RULES, "DealSeedRevealed")


# ------------------------------------------------------------------ moves and results


def test_a_changed_score_is_not_what_the_rules_give() -> None:
    game = played(T358)
    scored = first(game, "DealScored", 7)

    def change(data: dict[str, Any]) -> None:
        data["points"] = [p + d for p, d in zip(data["points"], (2, -2, 0), strict=True)]

    events, chain = forged(game, scored.position, change)
    expect(events, chain, scored.position, Check.NOT_FROM_RULES, "points")


@pytest.mark.parametrize("game_id", [T358, KHOZOR])
def test_a_changed_final_result_differs_from_the_replay(game_id: str) -> None:
    game = played(game_id)
    final = game.events[-1]
    assert final.type in ("GameEnded", "MatchWon")

    def change(data: dict[str, Any]) -> None:
        if "places" in data:
            data["places"] = list(reversed(data["places"]))
        else:
            data["team"] = "A" if data["team"] == "B" else "B"

    events, chain = forged(game, final.position, change)
    expect(events, chain, final.position, Check.RESULT_MISMATCH, "the replay gives")


def test_a_card_played_out_of_turn_is_an_illegal_move() -> None:
    game = played(T358)
    played_card = first(game, "CardPlayed", 30)

    def change(data: dict[str, Any]) -> None:
        data["seat"] = (data["seat"] + 1) % 3  # the card, played by a seat out of turn

    events, chain = forged(game, played_card.position, change)
    expect(events, chain, played_card.position, Check.ILLEGAL_MOVE, "NOT_YOUR_TURN")


def test_an_event_the_rules_never_produce_here_is_named() -> None:
    game = played(KHOZOR)
    won = first(game, "RoundWon")
    events = game.copy_events()
    swapped = dataclasses.replace(events[won.position - 2], data=dict(won.data), type=won.type)
    events[won.position - 2] = swapped  # a round won one event early
    forged_events, chain = rehashed(events)
    expect(forged_events, chain, won.position - 1, Check.NOT_FROM_RULES)


def test_a_stream_cut_in_the_middle_of_a_move_is_incomplete() -> None:
    game = played(T358)
    trick = first(game, "TrickTaken", 3)
    events, chain = rehashed(game.copy_events()[: trick.position - 1])
    expect(events, chain, trick.position, Check.INCOMPLETE_MOVE, "TrickTaken")


def test_events_of_another_table_are_not_this_table() -> None:
    game = played(T358)
    events = game.copy_events()
    events[0].data["table_id"] = "00000000-0000-5000-8000-000000000000"
    forged_events, chain = rehashed(events)
    expect(forged_events, chain, 1, Check.NOT_A_TABLE, "00000000-0000-5000-8000-000000000000")


def test_undecodable_data_is_named() -> None:
    game = played(T358)
    contract = first(game, "ContractChosen", 2)

    def change(data: dict[str, Any]) -> None:
        data["contract"] = "XX"

    events, chain = forged(game, contract.position, change)
    expect(events, chain, contract.position, Check.UNDECODABLE)


# ------------------------------------------------------------------ the hash chain


def test_a_row_changed_without_rehashing_is_a_broken_chain() -> None:
    game = played(T358)
    scored = first(game, "DealScored", 2)
    events = game.copy_events()
    events[scored.position - 1].data["totals"] = [99, -99, 0]
    chain = verify_events(events[0].stream, None, events)
    # (no head given: the chain still breaks first at the changed row)
    report = expect(events, chain, scored.position, Check.HASH_CHAIN, "HASH_MISMATCH")
    assert report.problem is not None
    assert report.problem.type == "DealScored"


def test_the_earliest_problem_wins() -> None:
    game = played(T358)
    early, late = first(game, "CardsDealt", 2), first(game, "DealScored", 9)

    def change(data: dict[str, Any]) -> None:
        data["seed"] = other_seed(data["seed"])

    events, chain = forged(game, early.position, change)
    events[late.position - 1].data["totals"] = [1, 2, 3]  # after re-hashing: chain breaks
    chain = dataclasses.replace(
        chain, first_bad_position=late.position, failure=VerifyFailure.HASH_MISMATCH
    )
    expect(events, chain, early.position, Check.SEED_COMMITMENT)

    # A tie: the row is bad for both; the chain's finding (changed without re-hashing) wins.
    events, chain = forged(game, early.position, change)
    chain = dataclasses.replace(
        chain, first_bad_position=early.position, failure=VerifyFailure.HASH_MISMATCH
    )
    expect(events, chain, early.position, Check.HASH_CHAIN)


def test_an_empty_stream_is_no_table() -> None:
    chain = verify_events("table-x", None, [])
    report = audit.verify([], chain)
    assert report.problem is not None
    assert report.problem.check is Check.NOT_A_TABLE
