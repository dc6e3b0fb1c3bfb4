"""The labels of the dispute viewer's page in every player-facing language.

The page's own words (headings, column names, yes/no, explanations) are the viewer's
language; the events' lines are the replay's texts (`step_text`), the same in every
language, like the log they quote; cards keep their log spelling ("10S") so that the
page, `kozyr replay` and an SQL query of the events name a card alike.
"""

from __future__ import annotations

from collections.abc import Mapping

from kozyr.games.translations import Lang, Texts, in_language

LABELS: Mapping[str, Texts] = {
    "title": {
        Lang.EN: "Dispute viewer",
        Lang.RO: "Vizualizator de dispute",
        Lang.IT: "Visualizzatore di contestazioni",
    },
    "table": {Lang.EN: "Table", Lang.RO: "Masa", Lang.IT: "Tavolo"},
    "game": {Lang.EN: "Game", Lang.RO: "Jocul", Lang.IT: "Gioco"},
    "status": {Lang.EN: "Status", Lang.RO: "Starea", Lang.IT: "Stato"},
    "finished": {Lang.EN: "finished", Lang.RO: "terminată", Lang.IT: "terminata"},
    "in_progress": {Lang.EN: "in progress", Lang.RO: "în desfășurare", Lang.IT: "in corso"},
    "events": {Lang.EN: "Events", Lang.RO: "Evenimente", Lang.IT: "Eventi"},
    "viewer": {Lang.EN: "Viewer", Lang.RO: "Vedere", Lang.IT: "Vista"},
    "moderator": {
        Lang.EN: "moderator: every card",
        Lang.RO: "moderator: toate cărțile",
        Lang.IT: "moderatore: tutte le carte",
    },
    "seat_view": {
        Lang.EN: "seat {seat} ({player}): only what this seat saw",
        Lang.RO: "locul {seat} ({player}): doar ce a văzut acest loc",
        Lang.IT: "posto {seat} ({player}): solo ciò che ha visto questo posto",
    },
    "options": {Lang.EN: "Options", Lang.RO: "Opțiuni", Lang.IT: "Opzioni"},
    "defaults": {Lang.EN: "defaults", Lang.RO: "implicite", Lang.IT: "predefinite"},
    "times": {
        Lang.EN: "Times are when the log recorded each event.",
        Lang.RO: "Orele sunt cele la care jurnalul a înregistrat fiecare eveniment.",
        Lang.IT: "Gli orari sono quelli in cui il registro ha annotato ogni evento.",
    },
    "players": {Lang.EN: "Players", Lang.RO: "Jucători", Lang.IT: "Giocatori"},
    "seat": {Lang.EN: "Seat", Lang.RO: "Locul", Lang.IT: "Posto"},
    "player": {Lang.EN: "Player", Lang.RO: "Jucătorul", Lang.IT: "Giocatore"},
    "computer": {Lang.EN: "computer", Lang.RO: "calculator", Lang.IT: "computer"},
    "contents": {Lang.EN: "Contents", Lang.RO: "Cuprins", Lang.IT: "Indice"},
    "opening": {
        Lang.EN: "Before the first deal",
        Lang.RO: "Înainte de prima împărțire",
        Lang.IT: "Prima della prima smazzata",
    },
    "Deal": {Lang.EN: "Deal", Lang.RO: "Împărțirea", Lang.IT: "Smazzata"},
    "Round": {Lang.EN: "Round", Lang.RO: "Runda", Lang.IT: "Mano"},
    "dealt_at": {Lang.EN: "dealt at", Lang.RO: "împărțită la", Lang.IT: "distribuita alle"},
    "commitment": {Lang.EN: "Commitment", Lang.RO: "Angajament", Lang.IT: "Impegno"},
    "hands": {
        Lang.EN: "Hands at the start",
        Lang.RO: "Mâinile la început",
        Lang.IT: "Mani all'inizio",
    },
    "own_hand": {
        Lang.EN: "Your first cards",
        Lang.RO: "Primele tale cărți",
        Lang.IT: "Le tue prime carte",
    },
    "hidden": {
        Lang.EN: "{count} cards, not shown to this seat",
        Lang.RO: "{count} cărți, nearătate acestui loc",
        Lang.IT: "{count} carte, non mostrate a questo posto",
    },
    "cards": {Lang.EN: "Cards", Lang.RO: "Cărțile", Lang.IT: "Carte"},
    "talon": {Lang.EN: "talon", Lang.RO: "talon", Lang.IT: "tallone"},
    "reserve": {Lang.EN: "reserve", Lang.RO: "rezervă", Lang.IT: "riserva"},
    "play": {Lang.EN: "Play", Lang.RO: "Desfășurarea", Lang.IT: "Svolgimento"},
    "position": {Lang.EN: "#", Lang.RO: "#", Lang.IT: "#"},
    "time": {Lang.EN: "Time", Lang.RO: "Ora", Lang.IT: "Ora"},
    "event": {Lang.EN: "Event", Lang.RO: "Evenimentul", Lang.IT: "Evento"},
    "made_by": {Lang.EN: "Made by", Lang.RO: "Făcută de", Lang.IT: "Fatta da"},
    "end": {Lang.EN: "End of the game", Lang.RO: "Sfârșitul jocului", Lang.IT: "Fine del gioco"},
    "scores": {Lang.EN: "Scores", Lang.RO: "Scoruri", Lang.IT: "Punteggi"},
    "score": {Lang.EN: "Score", Lang.RO: "Scorul", Lang.IT: "Punteggio"},
    "result": {Lang.EN: "Result", Lang.RO: "Rezultatul", Lang.IT: "Risultato"},
    "standing": {
        Lang.EN: "Standing so far (provisional: the game is in progress)",
        Lang.RO: "Clasamentul de până acum (provizoriu: jocul este în desfășurare)",
        Lang.IT: "Classifica finora (provvisoria: il gioco è in corso)",
    },
    "fairness": {
        Lang.EN: "Fairness proof",
        Lang.RO: "Dovada corectitudinii",
        Lang.IT: "Prova di equità",
    },
    "fairness_intro": {
        Lang.EN: "Each deal is dealt from a secret seed. Its SHA-256, the commitment, is"
        " public from the deal on; the seed is revealed when the deal ends. Hashing the"
        " seed must give the commitment, and dealing from the seed must give the very"
        " hands that were dealt.",
        Lang.RO: "Fiecare împărțire pornește de la o sămânță secretă. SHA-256 al ei,"
        " angajamentul, este public de la împărțire; sămânța este dezvăluită la sfârșitul"
        " împărțirii. Hash-ul sămânței trebuie să dea angajamentul, iar împărțirea din"
        " sămânță trebuie să dea exact mâinile împărțite.",
        Lang.IT: "Ogni smazzata parte da un seme segreto. Il suo SHA-256, l'impegno, è"
        " pubblico dalla smazzata in poi; il seme è rivelato alla fine della smazzata."
        " L'hash del seme deve dare l'impegno, e distribuire dal seme deve dare"
        " esattamente le mani distribuite.",
    },
    "seed": {Lang.EN: "Seed", Lang.RO: "Sămânța", Lang.IT: "Seme"},
    "not_revealed": {
        Lang.EN: "not revealed yet",
        Lang.RO: "încă nedezvăluită",
        Lang.IT: "non ancora rivelato",
    },
    "commitment_holds": {
        Lang.EN: "SHA-256(seed) = commitment",
        Lang.RO: "SHA-256(sămânță) = angajament",
        Lang.IT: "SHA-256(seme) = impegno",
    },
    "rederived": {
        Lang.EN: "Deal re-derived from the seed equals the one dealt",
        Lang.RO: "Împărțirea recalculată din sămânță este cea împărțită",
        Lang.IT: "La smazzata ricalcolata dal seme è quella distribuita",
    },
    "derived": {
        Lang.EN: "Seed = HMAC of the committed server seed over the client seeds",
        Lang.RO: "Sămânța = HMAC al seminței serverului angajate peste semințele clienților",
        Lang.IT: "Seme = HMAC del seme del server impegnato sui semi dei client",
    },
    "yes": {Lang.EN: "yes", Lang.RO: "da", Lang.IT: "sì"},
    "no": {Lang.EN: "no", Lang.RO: "nu", Lang.IT: "no"},
    "unknown": {Lang.EN: "-", Lang.RO: "-", Lang.IT: "-"},
    "verified": {
        Lang.EN: "The whole log verified (kozyr verify)",
        Lang.RO: "Jurnalul întreg verificat (kozyr verify)",
        Lang.IT: "L'intero registro verificato (kozyr verify)",
    },
    "verify_ok": {
        Lang.EN: "yes: every check holds",
        Lang.RO: "da: toate verificările sunt în regulă",
        Lang.IT: "sì: tutti i controlli sono superati",
    },
    "verify_failed": {
        Lang.EN: "no: {check} fails at event #{position}",
        Lang.RO: "nu: {check} eșuează la evenimentul #{position}",
        Lang.IT: "no: {check} fallisce all'evento #{position}",
    },
}
"""Every label of the page, in every language (a test checks that none is missing)."""


def label(key: str, lang: Lang, **params: object) -> str:
    """The label `key` in `lang`, its placeholders filled from `params`."""
    text = in_language(LABELS[key], lang)
    return text.format(**params) if params else text
