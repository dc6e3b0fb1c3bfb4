"""The labels of the dispute viewer's page in every player-facing language.

The page's own words (headings, column names, yes/no, explanations) are the viewer's
language; the events' lines are the replay's texts (`step_text`), the same in every
language, like the log they quote; cards keep their log spelling ("10S") so that the
page, `kozyr replay` and an SQL query of the events name a card alike.
"""

from __future__ import annotations

from collections.abc import Mapping

from kozyr.texts import Lang, Texts, in_language

LABELS: Mapping[str, Texts] = {
    "title": Texts(
        en="Dispute viewer",
        ro="Vizualizator de dispute",
        it="Visualizzatore di contestazioni",
    ),
    "table": Texts(en="Table", ro="Masa", it="Tavolo"),
    "game": Texts(en="Game", ro="Jocul", it="Gioco"),
    "status": Texts(en="Status", ro="Starea", it="Stato"),
    "finished": Texts(en="finished", ro="terminată", it="terminata"),
    "in_progress": Texts(en="in progress", ro="în desfășurare", it="in corso"),
    "events": Texts(en="Events", ro="Evenimente", it="Eventi"),
    "viewer": Texts(en="Viewer", ro="Vedere", it="Vista"),
    "moderator": Texts(
        en="moderator: every card",
        ro="moderator: toate cărțile",
        it="moderatore: tutte le carte",
    ),
    "spectator": Texts(
        en="spectator: only what a spectator saw",
        ro="spectator: doar ce a văzut un spectator",
        it="spettatore: solo ciò che ha visto uno spettatore",
    ),
    "open_hand_view": Texts(
        en="open-hand spectator, {delay} moves behind: what he may see now (to #{position})",
        ro="spectator cu cărțile la vedere, {delay} mutări în urmă: ce poate vedea acum "
        "(până la #{position})",
        it="spettatore a carte scoperte, {delay} mosse indietro: ciò che può vedere ora "
        "(fino a #{position})",
    ),
    "open_hands": Texts(
        en="Every hand at #{position}",
        ro="Toate mâinile la #{position}",
        it="Tutte le mani a #{position}",
    ),
    "seat_view": Texts(
        en="seat {seat} ({player}): only what this seat saw",
        ro="locul {seat} ({player}): doar ce a văzut acest loc",
        it="posto {seat} ({player}): solo ciò che ha visto questo posto",
    ),
    "options": Texts(en="Options", ro="Opțiuni", it="Opzioni"),
    "defaults": Texts(en="defaults", ro="implicite", it="predefinite"),
    "times": Texts(
        en="Times are when the log recorded each event.",
        ro="Orele sunt cele la care jurnalul a înregistrat fiecare eveniment.",
        it="Gli orari sono quelli in cui il registro ha annotato ogni evento.",
    ),
    "players": Texts(en="Players", ro="Jucători", it="Giocatori"),
    "seat": Texts(en="Seat", ro="Locul", it="Posto"),
    "player": Texts(en="Player", ro="Jucătorul", it="Giocatore"),
    "computer": Texts(en="computer", ro="calculator", it="computer"),
    "contents": Texts(en="Contents", ro="Cuprins", it="Indice"),
    "opening": Texts(
        en="Before the first deal",
        ro="Înainte de prima împărțire",
        it="Prima della prima smazzata",
    ),
    "Deal": Texts(en="Deal", ro="Împărțirea", it="Smazzata"),
    "Round": Texts(en="Round", ro="Runda", it="Mano"),
    "dealt_at": Texts(en="dealt at", ro="împărțită la", it="distribuita alle"),
    "commitment": Texts(en="Commitment", ro="Angajament", it="Impegno"),
    "hands": Texts(
        en="Hands at the start",
        ro="Mâinile la început",
        it="Mani all'inizio",
    ),
    "own_hand": Texts(
        en="Your first cards",
        ro="Primele tale cărți",
        it="Le tue prime carte",
    ),
    "hidden": Texts(
        en="{count} cards, not shown to this seat",
        ro="{count} cărți, nearătate acestui loc",
        it="{count} carte, non mostrate a questo posto",
    ),
    "cards": Texts(en="Cards", ro="Cărțile", it="Carte"),
    "talon": Texts(en="talon", ro="talon", it="tallone"),
    "reserve": Texts(en="reserve", ro="rezervă", it="riserva"),
    "play": Texts(en="Play", ro="Desfășurarea", it="Svolgimento"),
    "position": Texts(en="#", ro="#", it="#"),
    "time": Texts(en="Time", ro="Ora", it="Ora"),
    "event": Texts(en="Event", ro="Evenimentul", it="Evento"),
    "made_by": Texts(en="Made by", ro="Făcută de", it="Fatta da"),
    "end": Texts(en="End of the game", ro="Sfârșitul jocului", it="Fine del gioco"),
    "scores": Texts(en="Scores", ro="Scoruri", it="Punteggi"),
    "score": Texts(en="Score", ro="Scorul", it="Punteggio"),
    "result": Texts(en="Result", ro="Rezultatul", it="Risultato"),
    "standing": Texts(
        en="Standing so far (provisional: the game is in progress)",
        ro="Clasamentul de până acum (provizoriu: jocul este în desfășurare)",
        it="Classifica finora (provvisoria: il gioco è in corso)",
    ),
    "fairness": Texts(
        en="Fairness proof",
        ro="Dovada corectitudinii",
        it="Prova di equità",
    ),
    "fairness_intro": Texts(
        en="Each deal is dealt from a secret seed. Its SHA-256, the commitment, is"
        " public from the deal on; the seed is revealed when the deal ends. Hashing the"
        " seed must give the commitment, and dealing from the seed must give the very"
        " hands that were dealt.",
        ro="Fiecare împărțire pornește de la o sămânță secretă. SHA-256 al ei,"
        " angajamentul, este public de la împărțire; sămânța este dezvăluită la sfârșitul"
        " împărțirii. Hash-ul sămânței trebuie să dea angajamentul, iar împărțirea din"
        " sămânță trebuie să dea exact mâinile împărțite.",
        it="Ogni smazzata parte da un seme segreto. Il suo SHA-256, l'impegno, è"
        " pubblico dalla smazzata in poi; il seme è rivelato alla fine della smazzata."
        " L'hash del seme deve dare l'impegno, e distribuire dal seme deve dare"
        " esattamente le mani distribuite.",
    ),
    "seed": Texts(en="Seed", ro="Sămânța", it="Seme"),
    "not_revealed": Texts(
        en="not revealed yet",
        ro="încă nedezvăluită",
        it="non ancora rivelato",
    ),
    "commitment_holds": Texts(
        en="SHA-256(seed) = commitment",
        ro="SHA-256(sămânță) = angajament",
        it="SHA-256(seme) = impegno",
    ),
    "rederived": Texts(
        en="Deal re-derived from the seed equals the one dealt",
        ro="Împărțirea recalculată din sămânță este cea împărțită",
        it="La smazzata ricalcolata dal seme è quella distribuita",
    ),
    "derived": Texts(
        en="Seed = HMAC of the committed server seed over the client seeds",
        ro="Sămânța = HMAC al seminței serverului angajate peste semințele clienților",
        it="Seme = HMAC del seme del server impegnato sui semi dei client",
    ),
    "yes": Texts(en="yes", ro="da", it="sì"),
    "no": Texts(en="no", ro="nu", it="no"),
    "unknown": Texts(en="-", ro="-", it="-"),
    "verified": Texts(
        en="The whole log verified (kozyr verify)",
        ro="Jurnalul întreg verificat (kozyr verify)",
        it="L'intero registro verificato (kozyr verify)",
    ),
    "verify_ok": Texts(
        en="yes: every check holds",
        ro="da: toate verificările sunt în regulă",
        it="sì: tutti i controlli sono superati",
    ),
    "verify_failed": Texts(
        en="no: {check} fails at event #{position}",
        ro="nu: {check} eșuează la evenimentul #{position}",
        it="no: {check} fallisce all'evento #{position}",
    ),
}
"""Every label of the page, in every language (a test checks that none is missing)."""


def label(key: str, lang: Lang, **params: object) -> str:
    """The label `key` in `lang`, its placeholders filled from `params`."""
    text = in_language(LABELS[key], lang)
    return text.format(**params) if params else text
