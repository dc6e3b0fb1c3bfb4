"""The deal seed derivation of seed scheme 2 from docs/fair-deal.md §9 alone.

A foreign client has only that page: the test reads §9's vector and its Python
`derive` out of the page, and §8's `shuffle` script, runs them with nothing but the
standard library, and checks them against the printed vector and against the library —
so neither the page nor the code can drift from the other.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Any

import pytest

from kozyr.games import three_five_eight
from kozyr.games.cards import format_cards
from kozyr.table.domain import seeding
from kozyr.table.domain.seeding import SeedRefused

PAGE = (Path(__file__).resolve().parents[3] / "docs" / "fair-deal.md").read_text()
SECTION = PAGE[PAGE.index("## 9. Seed scheme 2") :]


def _code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _vector() -> dict[str, str]:
    """§9's test vector as `name → value` (continuation lines joined)."""
    block = next(b for b in _code_blocks(SECTION, "") if "derived seed S" in b)
    fields: dict[str, str] = {}
    name = ""
    for line in block.splitlines():
        head, _, value = line.partition("  ")
        if head.strip():
            name = head.strip()
            fields[name] = value.strip()
        else:
            fields[name] += "\n" + line.strip()
    return fields


def _docs_functions() -> dict[str, Any]:
    """`derive` of §9 and `shuffle` of §8's script, executed from the page's text."""
    namespace: dict[str, Any] = {}
    (derive,) = _code_blocks(SECTION, "python")
    script = next(b for b in _code_blocks(PAGE, "python") if "def shuffle" in b)
    exec(derive, namespace)
    exec(script[: script.index("seed_hex, commitment")], namespace)
    return namespace


VECTOR = _vector()
DOCS = _docs_functions()
TABLE_ID = VECTOR["table id"]
CLIENT_SEEDS = ("alice-7", "", "Zz 9~")
SERVER_SEED = bytes(range(32))


def test_the_page_states_the_inputs_the_test_uses() -> None:
    assert VECTOR["server seed K"].startswith("00 01 02 … 1f")
    assert VECTOR["deal number"] == "2"
    assert VECTOR["client seeds"].startswith('"alice-7", "" (seat 1 set none), "Zz 9~"')


def test_the_page_s_derive_gives_the_page_s_vector() -> None:
    derived = DOCS["derive"](SERVER_SEED, CLIENT_SEEDS, TABLE_ID, 2)
    assert hashlib.sha256(SERVER_SEED).hexdigest() == VECTOR["commitment of K"]
    assert derived.hex() == VECTOR["derived seed S"]
    assert hashlib.sha256(derived).hexdigest() == VECTOR["SHA-256(S)"]
    deck = [
        r + s
        for s in "CDHS"
        for r in ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    ]
    d = DOCS["shuffle"](deck, derived)
    lines = [line.split(":", 1)[1].split() for line in VECTOR["3-5-8 deal of S"].splitlines()]
    assert lines == [d[0:16], d[16:32], d[32:48], d[48:52]]


def test_the_library_derives_what_the_page_says() -> None:
    seed = seeding.derive_seed(SERVER_SEED, CLIENT_SEEDS, TABLE_ID, 2)
    assert seed.hex() == VECTOR["derived seed S"]
    hands, talon = three_five_eight.deal_from_seed(seed)
    assert " ".join(format_cards(talon)) in VECTOR["3-5-8 deal of S"]
    assert " ".join(format_cards(hands[0])) in VECTOR["3-5-8 deal of S"]


@pytest.mark.parametrize("trial", range(40))
def test_the_library_and_the_page_agree_on_random_inputs(trial: int) -> None:
    rng = random.Random(trial)
    alphabet = [chr(c) for c in range(0x20, 0x7F)]
    seats = rng.choice([3, 8])
    seeds = tuple(
        "".join(rng.choices(alphabet, k=rng.randint(0, seeding.MAX_CLIENT_SEED)))
        for _ in range(seats)
    )
    server_seed = rng.randbytes(32)
    table_id = f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
    deal = rng.randint(1, 40)
    assert seeding.derive_seed(server_seed, seeds, table_id, deal) == DOCS["derive"](
        server_seed, seeds, table_id, deal
    )


def test_every_input_changes_the_seed() -> None:
    """The lengths in the message: moving a character between seats, another deal, another
    table or another server seed each give another seed."""
    base = seeding.derive_seed(SERVER_SEED, ("ab", "c"), TABLE_ID, 2)
    others = [
        seeding.derive_seed(SERVER_SEED, ("a", "bc"), TABLE_ID, 2),
        seeding.derive_seed(SERVER_SEED, ("ab", "c"), TABLE_ID, 3),
        seeding.derive_seed(SERVER_SEED, ("ab", "c"), TABLE_ID.replace("3", "4"), 2),
        seeding.derive_seed(bytes(32), ("ab", "c"), TABLE_ID, 2),
        seeding.derive_seed(SERVER_SEED, ("ab", "c", ""), TABLE_ID, 2),
    ]
    assert len({base, *others}) == len(others) + 1


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("x", True),
        ("~" * 64, True),
        (" spaces are fine ", True),
        ("", False),
        ("y" * 65, False),
        ("café", False),
        ("tab\there", False),
    ],
)
def test_a_client_seed_is_1_to_64_printable_ascii_characters(text: str, ok: bool) -> None:
    assert seeding.is_client_seed(text) is ok


def test_only_the_next_committed_deal_takes_a_client_seed() -> None:
    pending = (seeding.Seeding(3, SERVER_SEED, ("", "", "")),)
    event = seeding.client_seed_event(pending, 2, 1, 3, "mine")
    assert event == seeding.ClientSeedSet(1, 3, "mine")
    after = seeding.with_client_seed(pending, event)
    assert after[0].client_seeds == ("", "mine", "")
    for deal, reason in [
        (2, "DEAL_ALREADY_STARTED"),
        (1, "DEAL_ALREADY_STARTED"),
        (4, "DEAL_NOT_OPEN"),
    ]:
        with pytest.raises(SeedRefused) as refused:
            seeding.client_seed_event(pending, 2, 1, deal, "mine")
        assert (refused.value.reason, refused.value.next_deal) == (reason, 3)
    with pytest.raises(SeedRefused) as uncommitted:
        seeding.client_seed_event((), 2, 1, 3, "mine")
    assert uncommitted.value.reason == "DEAL_NOT_OPEN"
