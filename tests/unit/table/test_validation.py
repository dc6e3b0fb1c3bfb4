"""Shape checks of incoming requests: one spelling per table, visible player ids."""

from __future__ import annotations

import uuid

import pytest

from kozyr.runtime.errors import InvalidArgument
from kozyr.table.edge import validation

CANONICAL = "123e4567-e89b-42d3-a456-426614174000"


def test_a_canonical_table_id_is_accepted_as_it_is() -> None:
    assert validation.table_id(CANONICAL) == CANONICAL
    fresh = str(uuid.uuid4())
    assert validation.table_id(fresh) == fresh


@pytest.mark.parametrize(
    "spelling",
    [
        CANONICAL.upper(),
        f"{{{CANONICAL}}}",
        f"urn:uuid:{CANONICAL}",
        CANONICAL.replace("-", ""),
        f" {CANONICAL}",
        f"{CANONICAL}\n",
        CANONICAL[:-1],
        "",
    ],
)
def test_other_spellings_of_a_table_id_are_refused(spelling: str) -> None:
    """uuid.UUID reads all of these as the same table: one table, one name."""
    with pytest.raises(InvalidArgument) as caught:
        validation.table_id(spelling)
    assert caught.value.reason == "INVALID_TABLE_ID"
    assert set(caught.value.messages) == {"en", "ro", "it"}


@pytest.mark.parametrize("player", ["ana", " ana", "ана-😀", "a b", "x" * 128])
def test_player_ids_with_a_visible_character_are_accepted(player: str) -> None:
    assert validation.player_id(player) == player


@pytest.mark.parametrize("player", ["", " ", "   ", "x" * 129, "ana\x00", "\t", "a\nb"])
def test_blank_long_or_unprintable_player_ids_are_refused(player: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        validation.player_id(player)
    assert caught.value.reason == "INVALID_PLAYER_ID"
