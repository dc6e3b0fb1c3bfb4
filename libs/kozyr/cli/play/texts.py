"""The terminal client's own words, in every player language (the game's names —
contracts, phases, signals — come from the games' own catalogues)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kozyr.texts import Lang, Texts, in_language

LABELS: Final[Mapping[str, Texts]] = {
    "deal": Texts(en="Deal", ro="Mâna", it="Mano"),
    "round": Texts(en="Round", ro="Runda", it="Turno"),
    "trump": Texts(en="Trump", ro="Atu", it="Atout"),
    "no_trump": Texts(en="none", ro="fără", it="nessuno"),
    "contract": Texts(en="Contract", ro="Joc", it="Gioco"),
    "contracts_left": Texts(
        en="contracts left",
        ro="jocuri rămase",
        it="giochi rimasti",
    ),
    "tricks": Texts(en="tricks", ro="levate", it="prese"),
    "target": Texts(en="of", ro="din", it="su"),
    "points": Texts(en="points", ro="puncte", it="punti"),
    "cards": Texts(en="cards", ro="cărți", it="carte"),
    "trick": Texts(en="Trick", ro="Levata", it="Presa"),
    "last_trick": Texts(en="Last trick", ro="Ultima levată", it="Ultima presa"),
    "taken_by": Texts(en="taken by", ro="luată de", it="presa da"),
    "pile": Texts(en="Pile", ro="Grămada", it="Mucchio"),
    "lead": Texts(en="leads", ro="deschide", it="apre"),
    "beat": Texts(en="beats", ro="bate", it="batte"),
    "reserve": Texts(en="Reserve", ro="Rezerva", it="Riserva"),
    "sleeping": Texts(en="asleep", ro="adormite", it="dormienti"),
    "wins": Texts(en="Rounds won", ro="Runde câștigate", it="Turni vinti"),
    "team": Texts(en="Team", ro="Echipa", it="Squadra"),
    "opening_team": Texts(en="opens", ro="deschide", it="apre"),
    "opener": Texts(en="Opener", ro="Începe", it="Inizia"),
    "signals": Texts(en="Signals", ro="Semnale", it="Segnali"),
    "hand": Texts(en="Your hand", ro="Mâna ta", it="La tua mano"),
    "exchange": Texts(en="Exchange", ro="Schimb", it="Cambio"),
    "talon": Texts(en="Talon", ro="Talon", it="Tallone"),
    "discards": Texts(en="Discarded", ro="Puse jos", it="Scartate"),
    "you": Texts(en="you", ro="tu", it="tu"),
    "person": Texts(en="person", ro="persoană", it="persona"),
    "computer": Texts(en="computer", ro="calculator", it="computer"),
    "level_easy": Texts(en="easy", ro="ușor", it="facile"),
    "level_normal": Texts(en="normal", ro="normal", it="normale"),
    "level_hard": Texts(en="hard", ro="greu", it="difficile"),
    "absent": Texts(en="absent", ro="absent", it="assente"),
    "online": Texts(en="online", ro="conectat", it="in linea"),
    "offline": Texts(en="offline", ro="deconectat", it="non in linea"),
    "presence_unknown": Texts(
        en="not seen yet",
        ro="încă nevăzut",
        it="non ancora visto",
    ),
    "seat": Texts(en="Seat", ro="Locul", it="Posto"),
    "your_turn": Texts(en="YOUR TURN", ro="RÂNDUL TĂU", it="TOCCA A TE"),
    "waiting_for": Texts(en="Waiting for", ro="Se așteaptă", it="In attesa di"),
    "client_seed": Texts(
        en="Seeds for the first deal",
        ro="Semințele primei împărțiri",
        it="Semi della prima mano",
    ),
    "turn": Texts(en="Turn", ro="Tura", it="Turno"),
    "game_over": Texts(en="GAME OVER", ro="JOC TERMINAT", it="PARTITA FINITA"),
    "place": Texts(en="place", ro="locul", it="posto"),
    "winner": Texts(en="Winner", ro="Câștigător", it="Vincitore"),
    "match_winner": Texts(
        en="Team {team} wins the match",
        ro="Echipa {team} câștigă meciul",
        it="La squadra {team} vince la partita",
    ),
    "hint": Texts(en="Hint", ro="Sugestie", it="Suggerimento"),
    "hint_ready": Texts(
        en="Hint: {move} — Enter plays it",
        ro="Sugestie: {move} — Enter o joacă",
        it="Suggerimento: {move} — Invio la gioca",
    ),
    "no_hints": Texts(
        en="No hint service configured (--bots-target)",
        ro="Niciun serviciu de sugestii configurat (--bots-target)",
        it="Nessun servizio di suggerimenti configurato (--bots-target)",
    ),
    "enter_plays": Texts(
        en="Enter plays: {move}",
        ro="Enter joacă: {move}",
        it="Invio gioca: {move}",
    ),
    "pick_up": Texts(en="pick up", ro="ia cărțile", it="raccogli"),
    "sent": Texts(en="Sent: {move}", ro="Trimis: {move}", it="Inviato: {move}"),
    "connecting": Texts(
        en="Connecting to the table…",
        ro="Conectare la masă…",
        it="Connessione al tavolo…",
    ),
    "reconnecting": Texts(
        en="Connection lost — reconnecting in {seconds:.0f} s…",
        ro="Conexiune pierdută — reconectare în {seconds:.0f} s…",
        it="Connessione persa — nuovo tentativo tra {seconds:.0f} s…",
    ),
    "reconnected": Texts(
        en="Connected again",
        ro="Conectat din nou",
        it="Di nuovo connesso",
    ),
    "searching": Texts(
        en="Looking for a table…",
        ro="Se caută o masă…",
        it="Ricerca di un tavolo…",
    ),
    "placing": Texts(
        en="Table found, opening it…",
        ro="Masă găsită, se deschide…",
        it="Tavolo trovato, apertura…",
    ),
    "party_code": Texts(
        en="Party code {code}: friends run `{join}`. Enter starts ({players} in the party).",
        ro="Codul grupului {code}: prietenii rulează `{join}`. Enter pornește ({players} în grup).",
        it="Codice del gruppo {code}: gli amici eseguono `{join}`. "
        "Invio avvia ({players} nel gruppo).",
    ),
    "party_joined": Texts(
        en="In party {code}: waiting for its leader to start…",
        ro="În grupul {code}: se așteaptă liderul să pornească…",
        it="Nel gruppo {code}: in attesa che il capo avvii…",
    ),
    "ticket_over": Texts(
        en="The search ended without a table ({state})",
        ro="Căutarea s-a încheiat fără masă ({state})",
        it="La ricerca è finita senza tavolo ({state})",
    ),
    "keys": Texts(
        en="←/→ or 1-9,0 choose · Space mark · Enter play · h hint · q quit",
        ro="←/→ sau 1-9,0 alege · Spațiu marchează · Enter joacă · h sugestie · q ieșire",
        it="←/→ o 1-9,0 scegli · Spazio segna · Invio gioca · h suggerimento · q esci",
    ),
    "keys_pick_up_signals": Texts(
        en="p pick up · t 3-set signal · f 5-set signal",
        ro="p ia cărțile · t semnal set de 3 · f semnal set de 5",
        it="p raccogli · t segnale set da 3 · f segnale set da 5",
    ),
    "table_id": Texts(
        en="Table {table_id} (back to it: {back})",
        ro="Masa {table_id} (revenire: {back})",
        it="Tavolo {table_id} (per tornarci: {back})",
    ),
    "seconds_left": Texts(en="{seconds} s", ro="{seconds} s", it="{seconds} s"),
    "confirm_opener": Texts(
        en="opener: {name}",
        ro="începe: {name}",
        it="inizia: {name}",
    ),
}


def join_command(code: str) -> str:
    """The command a friend runs to join a party (a placeholder in the texts: commands
    are not translated)."""
    return f"kozyr play --join {code}"


def back_command(table_id: str) -> str:
    """The command that comes back to a table."""
    return f"kozyr play --table {table_id}"


def label(key: str, lang: Lang, **params: object) -> str:
    """The label `key` in `lang` (English when missing), its placeholders filled."""
    text = in_language(LABELS[key], lang)
    return text.format(**params) if params else text
