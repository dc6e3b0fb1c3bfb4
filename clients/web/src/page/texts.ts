/** The page's own words in en/ro/it (the game's names as the terminal client and the
 * games' catalogues spell them: libs/kozyr/cli/play/texts.py, kozyr.games.translations).
 * The server's explanations come already translated (accept-language). */
export type Lang = "en" | "ro" | "it";
export const LANGS: readonly Lang[] = ["en", "ro", "it"];

/** "ro-RO", "it", "en_GB" → a page language; English when unknown. */
export function parseLang(value: string | null | undefined): Lang {
  const prefix = (value ?? "").trim().toLowerCase().slice(0, 2);
  return (LANGS as readonly string[]).includes(prefix) ? (prefix as Lang) : "en";
}

type Texts = Record<Lang, string>;

const LABELS = {
  title: { en: "kozyr — web table", ro: "kozyr — masa web", it: "kozyr — tavolo web" },
  login: { en: "Log in", ro: "Intră", it: "Entra" },
  name: { en: "Your name (development login)", ro: "Numele tău (autentificare de dezvoltare)", it: "Il tuo nome (accesso di sviluppo)" },
  language: { en: "Language", ro: "Limba", it: "Lingua" },
  token: { en: "or a token", ro: "sau un token", it: "o un token" },
  logged_in_as: { en: "Playing as {player}", ro: "Joci ca {player}", it: "Giochi come {player}" },
  log_out: { en: "Log out", ro: "Ieși", it: "Esci" },
  game: { en: "Game", ro: "Jocul", it: "Gioco" },
  game_358: { en: "3-5-8 (three players)", ro: "3-5-8 (trei jucători)", it: "3-5-8 (tre giocatori)" },
  game_khozor: { en: "Khözör (eight, two teams)", ro: "Khözör (opt, două echipe)", it: "Khözör (otto, due squadre)" },
  computers: { en: "Computers", ro: "Calculatoare", it: "Computer" },
  private_table: { en: "Play now with computers", ro: "Joacă acum cu calculatoare", it: "Gioca ora con i computer" },
  queue: { en: "Join the queue", ro: "Intră la coadă", it: "Entra in coda" },
  fill_now: {
    en: "In the queue, computers take the free seats at once",
    ro: "La coadă, calculatoarele ocupă imediat locurile libere",
    it: "In coda, i computer prendono subito i posti liberi",
  },
  cancel: { en: "Leave the queue", ro: "Ieși de la coadă", it: "Esci dalla coda" },
  open_table: { en: "Open a table by its id", ro: "Deschide o masă după id", it: "Apri un tavolo dal suo id" },
  open: { en: "Open", ro: "Deschide", it: "Apri" },
  back_to_lobby: { en: "Back to the lobby", ro: "Înapoi în salon", it: "Torna alla sala" },
  searching: { en: "Looking for a table…", ro: "Se caută o masă…", it: "Ricerca di un tavolo…" },
  connecting: { en: "Connecting to the table…", ro: "Conectare la masă…", it: "Connessione al tavolo…" },
  reconnecting: {
    en: "Connection lost — reconnecting in {seconds} s…",
    ro: "Conexiune pierdută — reconectare în {seconds} s…",
    it: "Connessione persa — nuovo tentativo tra {seconds} s…",
  },
  reconnected: { en: "Connected again", ro: "Conectat din nou", it: "Di nuovo connesso" },
  lost: { en: "The move's answer was lost: it is sent again", ro: "Răspunsul mutării s-a pierdut: se trimite din nou", it: "La risposta della mossa si è persa: viene reinviata" },
  sent: { en: "Sent: {move}", ro: "Trimis: {move}", it: "Inviato: {move}" },
  your_turn: { en: "YOUR TURN", ro: "RÂNDUL TĂU", it: "TOCCA A TE" },
  waiting_for: { en: "Waiting for", ro: "Se așteaptă", it: "In attesa di" },
  turn: { en: "Turn", ro: "Tura", it: "Turno" },
  seconds_left: { en: "{seconds} s left", ro: "{seconds} s rămase", it: "{seconds} s rimasti" },
  your_time: { en: "Your time", ro: "Timpul tău", it: "Il tuo tempo" },
  game_over: { en: "GAME OVER", ro: "JOC TERMINAT", it: "PARTITA FINITA" },
  table: { en: "Table", ro: "Masa", it: "Tavolo" },
  seats: { en: "Seats", ro: "Locuri", it: "Posti" },
  seat: { en: "Seat", ro: "Locul", it: "Posto" },
  you: { en: "you", ro: "tu", it: "tu" },
  computer_n: { en: "computer {n}", ro: "calculator {n}", it: "computer {n}" },
  person: { en: "person", ro: "persoană", it: "persona" },
  computer: { en: "computer", ro: "calculator", it: "computer" },
  absent: { en: "absent", ro: "absent", it: "assente" },
  online: { en: "online", ro: "conectat", it: "in linea" },
  offline: { en: "offline", ro: "deconectat", it: "non in linea" },
  presence_unknown: { en: "not seen yet", ro: "încă nevăzut", it: "non ancora visto" },
  deal: { en: "Deal", ro: "Mâna", it: "Mano" },
  round: { en: "Round", ro: "Runda", it: "Turno" },
  trump: { en: "Trump", ro: "Atu", it: "Atout" },
  no_trump: { en: "none", ro: "fără", it: "nessuno" },
  contract: { en: "Contract", ro: "Joc", it: "Gioco" },
  tricks: { en: "tricks", ro: "levate", it: "prese" },
  of: { en: "of", ro: "din", it: "su" },
  points: { en: "points", ro: "puncte", it: "punti" },
  cards: { en: "cards", ro: "cărți", it: "carte" },
  trick: { en: "Trick", ro: "Levata", it: "Presa" },
  last_trick: { en: "Last trick", ro: "Ultima levată", it: "Ultima presa" },
  taken_by: { en: "taken by", ro: "luată de", it: "presa da" },
  pile: { en: "Pile", ro: "Grămada", it: "Mucchio" },
  leads: { en: "leads", ro: "deschide", it: "apre" },
  beats: { en: "beats", ro: "bate", it: "batte" },
  reserve: { en: "Reserve", ro: "Rezerva", it: "Riserva" },
  asleep: { en: "asleep", ro: "adormite", it: "dormienti" },
  wins: { en: "Rounds won", ro: "Runde câștigate", it: "Turni vinti" },
  team: { en: "Team", ro: "Echipa", it: "Squadra" },
  opens: { en: "opens", ro: "deschide", it: "apre" },
  opener: { en: "Opener", ro: "Începe", it: "Inizia" },
  signals: { en: "Signals of your team", ro: "Semnalele echipei tale", it: "Segnali della tua squadra" },
  three_set: { en: "3-set", ro: "set de 3", it: "set da 3" },
  five_set: { en: "5-set", ro: "set de 5", it: "set da 5" },
  signal_three: { en: "Signal: I hold a 3-set", ro: "Semnal: am un set de 3", it: "Segnale: ho un set da 3" },
  signal_five: { en: "Signal: I hold a 5-set", ro: "Semnal: am un set de 5", it: "Segnale: ho un set da 5" },
  hand: { en: "Your hand", ro: "Mâna ta", it: "La tua mano" },
  moves: { en: "Your moves", ro: "Mutările tale", it: "Le tue mosse" },
  no_moves: { en: "Nothing to do now", ro: "Nimic de făcut acum", it: "Niente da fare ora" },
  play_selected: { en: "Play the marked cards", ro: "Joacă cărțile marcate", it: "Gioca le carte segnate" },
  hint: { en: "Hint", ro: "Sugestie", it: "Suggerimento" },
  hint_ready: { en: "Hint: {move}", ro: "Sugestie: {move}", it: "Suggerimento: {move}" },
  playable: { en: "playable", ro: "se poate juca", it: "giocabile" },
  marked: { en: "marked", ro: "marcată", it: "segnata" },
  talon: { en: "Talon", ro: "Talon", it: "Tallone" },
  discards: { en: "Discarded", ro: "Puse jos", it: "Scartate" },
  place: { en: "place", ro: "locul", it: "posto" },
  match_winner: { en: "Team {team} wins the match", ro: "Echipa {team} câștigă meciul", it: "La squadra {team} vince la partita" },
  play_card: { en: "Play {card}", ro: "Joacă {card}", it: "Gioca {card}" },
  give_card: { en: "Give {card}", ro: "Dă {card}", it: "Dai {card}" },
  discard: { en: "Discard {cards}", ro: "Pune jos {cards}", it: "Scarta {cards}" },
  choose_contract: { en: "Contract: {contract}", ro: "Joc: {contract}", it: "Gioco: {contract}" },
  lead: { en: "Lead {cards}", ro: "Deschide cu {cards}", it: "Apri con {cards}" },
  beat: { en: "Beat with {cards}", ro: "Bate cu {cards}", it: "Batti con {cards}" },
  pick_up: { en: "Pick up the pile", ro: "Ia grămada", it: "Raccogli il mucchio" },
  confirm_opener: { en: "Opener: {seat}", ro: "Începe: {seat}", it: "Inizia: {seat}" },
  toggle_signal: { en: "Signal {signal}", ro: "Semnal {signal}", it: "Segnale {signal}" },
  connection: { en: "Connection", ro: "Conexiune", it: "Connessione" },
} satisfies Record<string, Texts>;

export type Label = keyof typeof LABELS;

/** One label in `lang`, `{name}` placeholders filled from `params`. */
export function label(key: Label, lang: Lang, params: Record<string, string | number> = {}): string {
  return LABELS[key][lang].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

const RANK_LETTERS: Record<Lang, Record<string, string>> = {
  en: {},
  ro: { J: "V", Q: "D", K: "R" }, // valet, damă, rege
  it: { J: "F", Q: "D", K: "R" }, // fante, donna, re
};
const SUITS: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };
const JOKERS: Record<Lang, { name: string; colours: Record<string, string> }> = {
  en: { name: "{} joker", colours: { gray: "gray", black: "black", red: "red" } },
  ro: { name: "joker {}", colours: { gray: "gri", black: "negru", red: "roșu" } },
  it: { name: "jolly {}", colours: { gray: "grigio", black: "nero", red: "rosso" } },
};

/** A card code ("QS", "10H", "JK-red") as a player reads it: "D♠" in Romanian. */
export function cardName(code: string, lang: Lang): string {
  if (code.startsWith("JK-")) {
    const joker = JOKERS[lang];
    return joker.name.replace("{}", joker.colours[code.slice(3)] ?? code.slice(3));
  }
  const rank = code.slice(0, -1);
  const suit = code.slice(-1);
  return (RANK_LETTERS[lang][rank] ?? rank) + (SUITS[suit] ?? suit);
}

/** Whether a card is red (hearts, diamonds, the red joker): the page colours it. */
export function isRed(code: string): boolean {
  return code.endsWith("H") || code.endsWith("D") || code === "JK-red";
}

const CONTRACTS: Record<string, Texts> = {
  S: { en: "♠ trump", ro: "Atu ♠", it: "Atout ♠" },
  H: { en: "♥ trump", ro: "Atu ♥", it: "Atout ♥" },
  D: { en: "♦ trump", ro: "Atu ♦", it: "Atout ♦" },
  C: { en: "♣ trump", ro: "Atu ♣", it: "Atout ♣" },
  NT: { en: "No trump", ro: "Fără atu", it: "Senza atout" },
  MT: { en: "Minimum tricks", ro: "Fără levate", it: "Minima presa" },
};

/** A 3-5-8 contract ("S" … "MT") by its name in `lang`. */
export function contractName(code: string, lang: Lang): string {
  return CONTRACTS[code]?.[lang] ?? code;
}

const PHASES: Record<string, Texts> = {
  draw_dealer: { en: "Drawing the first dealer", ro: "Tragerea la sorți a dealerului", it: "Sorteggio del mazziere" },
  deal: { en: "Dealing", ro: "Împărțirea cărților", it: "Distribuzione" },
  contract: { en: "Choosing the contract", ro: "Alegerea jocului", it: "Scelta del gioco" },
  exchange: { en: "Card exchange", ro: "Schimbul de cărți", it: "Cambio carte" },
  discard: { en: "Talon and discard", ro: "Talonul și cărțile puse jos", it: "Tallone e scarto" },
  play: { en: "Play", ro: "Joc", it: "Gioco" },
  over: { en: "Game over", ro: "Joc terminat", it: "Partita finita" },
  awaiting_draw: { en: "Drawing the opening team", ro: "Tragerea la sorți", it: "Sorteggio" },
  awaiting_deal: { en: "Dealing", ro: "Împărțirea cărților", it: "Distribuzione" },
  chance: { en: "Dealing", ro: "Împărțirea cărților", it: "Distribuzione" },
  client_seed: { en: "Seeds for the first deal", ro: "Semințele primei împărțiri", it: "Semi della prima mano" },
  exchange_give: { en: "Give a card", ro: "Dă o carte", it: "Dai una carta" },
  lead: { en: "Lead", ro: "Deschide", it: "Apri" },
  defend: { en: "Beat or pick up", ro: "Bate sau ia", it: "Batti o raccogli" },
  confirm_opener: { en: "Confirming the opener", ro: "Confirmarea celui care începe", it: "Conferma di chi inizia" },
};

/** A game phase, or the kind of a turn ("lead", "exchange_give" …), by its name in `lang`. */
export function phaseName(code: string, lang: Lang): string {
  return PHASES[code]?.[lang] ?? code;
}

const ROLES: Record<string, Texts> = {
  declarer: { en: "Declarer", ro: "Declarant", it: "Dichiarante" },
  third: { en: "Third player", ro: "Al treilea jucător", it: "Terzo giocatore" },
  dealer: { en: "Dealer", ro: "Dealer", it: "Mazziere" },
};

/** A 3-5-8 role by its name in `lang`. */
export function roleName(code: string, lang: Lang): string {
  return ROLES[code]?.[lang] ?? code;
}
