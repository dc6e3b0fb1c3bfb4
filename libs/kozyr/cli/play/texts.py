"""The terminal client's own words, in every player language (the game's names —
contracts, phases, signals — come from the games' own catalogues)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kozyr.games.translations import Lang, Texts, in_language

LABELS: Final[Mapping[str, Texts]] = {
    "deal": {Lang.EN: "Deal", Lang.RO: "Mâna", Lang.IT: "Mano"},
    "round": {Lang.EN: "Round", Lang.RO: "Runda", Lang.IT: "Turno"},
    "trump": {Lang.EN: "Trump", Lang.RO: "Atu", Lang.IT: "Atout"},
    "no_trump": {Lang.EN: "none", Lang.RO: "fără", Lang.IT: "nessuno"},
    "contract": {Lang.EN: "Contract", Lang.RO: "Joc", Lang.IT: "Gioco"},
    "contracts_left": {
        Lang.EN: "contracts left",
        Lang.RO: "jocuri rămase",
        Lang.IT: "giochi rimasti",
    },
    "tricks": {Lang.EN: "tricks", Lang.RO: "levate", Lang.IT: "prese"},
    "target": {Lang.EN: "of", Lang.RO: "din", Lang.IT: "su"},
    "points": {Lang.EN: "points", Lang.RO: "puncte", Lang.IT: "punti"},
    "cards": {Lang.EN: "cards", Lang.RO: "cărți", Lang.IT: "carte"},
    "trick": {Lang.EN: "Trick", Lang.RO: "Levata", Lang.IT: "Presa"},
    "last_trick": {Lang.EN: "Last trick", Lang.RO: "Ultima levată", Lang.IT: "Ultima presa"},
    "taken_by": {Lang.EN: "taken by", Lang.RO: "luată de", Lang.IT: "presa da"},
    "pile": {Lang.EN: "Pile", Lang.RO: "Grămada", Lang.IT: "Mucchio"},
    "lead": {Lang.EN: "leads", Lang.RO: "deschide", Lang.IT: "apre"},
    "beat": {Lang.EN: "beats", Lang.RO: "bate", Lang.IT: "batte"},
    "reserve": {Lang.EN: "Reserve", Lang.RO: "Rezerva", Lang.IT: "Riserva"},
    "sleeping": {Lang.EN: "asleep", Lang.RO: "adormite", Lang.IT: "dormienti"},
    "wins": {Lang.EN: "Rounds won", Lang.RO: "Runde câștigate", Lang.IT: "Turni vinti"},
    "team": {Lang.EN: "Team", Lang.RO: "Echipa", Lang.IT: "Squadra"},
    "opening_team": {Lang.EN: "opens", Lang.RO: "deschide", Lang.IT: "apre"},
    "opener": {Lang.EN: "Opener", Lang.RO: "Începe", Lang.IT: "Inizia"},
    "signals": {Lang.EN: "Signals", Lang.RO: "Semnale", Lang.IT: "Segnali"},
    "hand": {Lang.EN: "Your hand", Lang.RO: "Mâna ta", Lang.IT: "La tua mano"},
    "exchange": {Lang.EN: "Exchange", Lang.RO: "Schimb", Lang.IT: "Cambio"},
    "talon": {Lang.EN: "Talon", Lang.RO: "Talon", Lang.IT: "Tallone"},
    "discards": {Lang.EN: "Discarded", Lang.RO: "Puse jos", Lang.IT: "Scartate"},
    "you": {Lang.EN: "you", Lang.RO: "tu", Lang.IT: "tu"},
    "person": {Lang.EN: "person", Lang.RO: "persoană", Lang.IT: "persona"},
    "computer": {Lang.EN: "computer", Lang.RO: "calculator", Lang.IT: "computer"},
    "level_easy": {Lang.EN: "easy", Lang.RO: "ușor", Lang.IT: "facile"},
    "level_normal": {Lang.EN: "normal", Lang.RO: "normal", Lang.IT: "normale"},
    "level_hard": {Lang.EN: "hard", Lang.RO: "greu", Lang.IT: "difficile"},
    "absent": {Lang.EN: "absent", Lang.RO: "absent", Lang.IT: "assente"},
    "online": {Lang.EN: "online", Lang.RO: "conectat", Lang.IT: "in linea"},
    "offline": {Lang.EN: "offline", Lang.RO: "deconectat", Lang.IT: "non in linea"},
    "presence_unknown": {
        Lang.EN: "not seen yet",
        Lang.RO: "încă nevăzut",
        Lang.IT: "non ancora visto",
    },
    "seat": {Lang.EN: "Seat", Lang.RO: "Locul", Lang.IT: "Posto"},
    "your_turn": {Lang.EN: "YOUR TURN", Lang.RO: "RÂNDUL TĂU", Lang.IT: "TOCCA A TE"},
    "waiting_for": {Lang.EN: "Waiting for", Lang.RO: "Se așteaptă", Lang.IT: "In attesa di"},
    "turn": {Lang.EN: "Turn", Lang.RO: "Tura", Lang.IT: "Turno"},
    "game_over": {Lang.EN: "GAME OVER", Lang.RO: "JOC TERMINAT", Lang.IT: "PARTITA FINITA"},
    "place": {Lang.EN: "place", Lang.RO: "locul", Lang.IT: "posto"},
    "winner": {Lang.EN: "Winner", Lang.RO: "Câștigător", Lang.IT: "Vincitore"},
    "match_winner": {
        Lang.EN: "Team {team} wins the match",
        Lang.RO: "Echipa {team} câștigă meciul",
        Lang.IT: "La squadra {team} vince la partita",
    },
    "hint": {Lang.EN: "Hint", Lang.RO: "Sugestie", Lang.IT: "Suggerimento"},
    "hint_ready": {
        Lang.EN: "Hint: {move} — Enter plays it",
        Lang.RO: "Sugestie: {move} — Enter o joacă",
        Lang.IT: "Suggerimento: {move} — Invio la gioca",
    },
    "no_hints": {
        Lang.EN: "No hint service configured (--bots-target)",
        Lang.RO: "Niciun serviciu de sugestii configurat (--bots-target)",
        Lang.IT: "Nessun servizio di suggerimenti configurato (--bots-target)",
    },
    "enter_plays": {
        Lang.EN: "Enter plays: {move}",
        Lang.RO: "Enter joacă: {move}",
        Lang.IT: "Invio gioca: {move}",
    },
    "pick_up": {Lang.EN: "pick up", Lang.RO: "ia cărțile", Lang.IT: "raccogli"},
    "sent": {Lang.EN: "Sent: {move}", Lang.RO: "Trimis: {move}", Lang.IT: "Inviato: {move}"},
    "connecting": {
        Lang.EN: "Connecting to the table…",
        Lang.RO: "Conectare la masă…",
        Lang.IT: "Connessione al tavolo…",
    },
    "reconnecting": {
        Lang.EN: "Connection lost — reconnecting in {seconds:.0f} s…",
        Lang.RO: "Conexiune pierdută — reconectare în {seconds:.0f} s…",
        Lang.IT: "Connessione persa — nuovo tentativo tra {seconds:.0f} s…",
    },
    "reconnected": {
        Lang.EN: "Connected again",
        Lang.RO: "Conectat din nou",
        Lang.IT: "Di nuovo connesso",
    },
    "searching": {
        Lang.EN: "Looking for a table…",
        Lang.RO: "Se caută o masă…",
        Lang.IT: "Ricerca di un tavolo…",
    },
    "placing": {
        Lang.EN: "Table found, opening it…",
        Lang.RO: "Masă găsită, se deschide…",
        Lang.IT: "Tavolo trovato, apertura…",
    },
    "party_code": {
        Lang.EN: "Party code {code}: friends run `{join}`. Enter starts ({players} in the party).",
        Lang.RO: "Codul grupului {code}: prietenii rulează `{join}`. "
        "Enter pornește ({players} în grup).",
        Lang.IT: "Codice del gruppo {code}: gli amici eseguono `{join}`. "
        "Invio avvia ({players} nel gruppo).",
    },
    "party_joined": {
        Lang.EN: "In party {code}: waiting for its leader to start…",
        Lang.RO: "În grupul {code}: se așteaptă liderul să pornească…",
        Lang.IT: "Nel gruppo {code}: in attesa che il capo avvii…",
    },
    "ticket_over": {
        Lang.EN: "The search ended without a table ({state})",
        Lang.RO: "Căutarea s-a încheiat fără masă ({state})",
        Lang.IT: "La ricerca è finita senza tavolo ({state})",
    },
    "keys": {
        Lang.EN: "←/→ or 1-9,0 choose · Space mark · Enter play · h hint · q quit",
        Lang.RO: "←/→ sau 1-9,0 alege · Spațiu marchează · Enter joacă · h sugestie · q ieșire",
        Lang.IT: "←/→ o 1-9,0 scegli · Spazio segna · Invio gioca · h suggerimento · q esci",
    },
    "keys_khozor": {
        Lang.EN: "p pick up · t 3-set signal · f 5-set signal",
        Lang.RO: "p ia cărțile · t semnal set de 3 · f semnal set de 5",
        Lang.IT: "p raccogli · t segnale set da 3 · f segnale set da 5",
    },
    "table_id": {
        Lang.EN: "Table {table_id} (back to it: {back})",
        Lang.RO: "Masa {table_id} (revenire: {back})",
        Lang.IT: "Tavolo {table_id} (per tornarci: {back})",
    },
    "seconds_left": {Lang.EN: "{seconds} s", Lang.RO: "{seconds} s", Lang.IT: "{seconds} s"},
    "confirm_opener": {
        Lang.EN: "opener: {name}",
        Lang.RO: "începe: {name}",
        Lang.IT: "inizia: {name}",
    },
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
