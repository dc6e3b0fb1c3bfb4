/**
 * The web table: log in with a development name (or a token), open a private table
 * with computers or queue, then play from the seat's view over gRPC-Web.
 *
 * The page server (`kozyr.webtable`, started by `make run`) serves this bundle, tells
 * where the gRPC-Web edge is (`config.json`) and, on a development stack only, mints a
 * player token for a name (`POST dev/token`). With `?record=1` in the address every
 * message and error the client received is kept in `window.kozyrReceived` (the browser
 * tests hand them to the leak checker).
 */
import { create, equals, toJson } from "@bufbuild/protobuf";
import { Game } from "../gen/kozyr/common/v1/games_pb.js";
import { CreatePrivateTableRequestSchema, EnterQueueRequestSchema } from "../gen/kozyr/matchmaking/v1/matchmaking_service_pb.js";
import { ActionSchema, Signal, type Action } from "../gen/kozyr/table/v1/actions_pb.js";
import type { TableView } from "../gen/kozyr/table/v1/views_pb.js";
import { createKozyr, errorDetails, errorText, newRequestId, TableSession, type Kozyr, type Received, type SessionEvent } from "../client/index.js";
import { actionCards, actionLabel, cardAction, defaultMarks, hand, markedAction, marking, myTurn, playableCards, signalAction } from "./moves.js";
import { byId, clockLine, clockSeconds, moveButtons, renderGame, turnLine } from "./render.js";
import { cardName, isRed, label, parseLang, type Label, type Lang } from "./texts.js";

interface Config {
  /** The gRPC-Web edge's URL; else `edgePort` on this page's host. */
  edgeUrl?: string;
  edgePort?: number;
  /** Whether `POST dev/token` mints tokens (a development stack only). */
  devLogin: boolean;
}

interface Login {
  player: string;
  token: string;
  lang: Lang;
}

export interface Recorded {
  method: string;
  /** The version of the view shown when it arrived. */
  shownVersion: string;
  message?: unknown;
  error?: { code: string; reason?: string; messages: Record<string, string>; message: string };
}

declare global {
  interface Window {
    kozyrReceived?: Recorded[];
  }
}

const LOGIN_KEY = "kozyr.login";
const state: {
  config: Config;
  login: Login | undefined;
  kozyr: Kozyr | undefined;
  session: TableSession | undefined;
  view: TableView | undefined;
  marks: string[];
  marksTurn: bigint;
  hinted: Action | undefined;
  ticket: AbortController | undefined;
} = {
  config: { devLogin: false },
  login: undefined,
  kozyr: undefined,
  session: undefined,
  view: undefined,
  marks: [],
  marksTurn: -1n,
  hinted: undefined,
  ticket: undefined,
};

const lang = (): Lang => state.login?.lang ?? parseLang(byId<HTMLSelectElement>("language").value);

function say(text: string, error = false): void {
  const status = byId("status");
  status.textContent = text;
  status.classList.toggle("error", error);
  status.dataset["kind"] = error ? "error" : "info";
}

function applyLabels(): void {
  const l = lang();
  document.documentElement.lang = l;
  document.title = label("title", l);
  for (const element of document.querySelectorAll<HTMLElement>("[data-label]")) {
    element.textContent = label(element.dataset["label"] as Label, l);
  }
  if (state.login) byId("who-text").textContent = label("logged_in_as", l, { player: state.login.player });
}

function show(screen: "login" | "lobby" | "table"): void {
  document.body.dataset["screen"] = screen;
  for (const id of ["login", "lobby", "table"]) byId(id).hidden = id !== screen;
  byId("who").hidden = screen === "login";
}

function edgeUrl(config: Config): string {
  if (config.edgeUrl) return config.edgeUrl;
  return `${location.protocol}//${location.hostname}:${config.edgePort ?? 8080}`;
}

function record(received: Received): void {
  const log = window.kozyrReceived;
  if (!log) return;
  const shownVersion = String(state.view?.version ?? 0n);
  if ("message" in received) {
    const message = toJson(received.schema, received.message, { useProtoFieldName: true });
    log.push({ method: received.method, shownVersion, message });
  } else {
    const d = errorDetails(received.error);
    log.push({
      method: received.method,
      shownVersion,
      error: { code: d.codeName, ...(d.reason ? { reason: d.reason } : {}), messages: d.messages, message: d.message },
    });
  }
}

function connect(): Kozyr {
  return createKozyr({
    baseUrl: edgeUrl(state.config),
    token: () => state.login?.token,
    language: () => state.login?.lang,
    observe: record,
  });
}

/** The player named by a token's `sub` (the page does not check it: the services do). */
function tokenSubject(token: string): string {
  try {
    const payload = token.split(".")[1] ?? "";
    const json = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { sub?: string };
    return json.sub ?? "?";
  } catch {
    return "?";
  }
}

async function logIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const chosen = parseLang(byId<HTMLSelectElement>("language").value);
  const given = byId<HTMLInputElement>("token-input").value.trim();
  const name = byId<HTMLInputElement>("player").value.trim();
  let login: Login;
  if (given) {
    login = { player: tokenSubject(given), token: given, lang: chosen };
  } else {
    const answer = await fetch("dev/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ player: name }),
    });
    const body = (await answer.json()) as { token?: string; player?: string; error?: Record<string, string> };
    if (!answer.ok || !body.token) {
      say(body.error?.[chosen] ?? body.error?.["en"] ?? answer.statusText, true);
      return;
    }
    login = { player: body.player ?? name, token: body.token, lang: chosen };
  }
  sessionStorage.setItem(LOGIN_KEY, JSON.stringify(login));
  start(login);
}

function start(login: Login): void {
  state.login = login;
  state.kozyr = connect();
  applyLabels();
  const table = new URLSearchParams(location.hash.slice(1)).get("table");
  if (table) {
    openTable(table);
  } else {
    show("lobby");
    byId("private").focus();
  }
}

function logOut(): void {
  state.session?.close();
  state.ticket?.abort();
  sessionStorage.removeItem(LOGIN_KEY);
  state.login = undefined;
  history.replaceState(null, "", location.pathname + location.search);
  show("login");
  applyLabels();
}

function chosenGame(): Game {
  const checked = document.querySelector<HTMLInputElement>('input[name="game"]:checked');
  return checked?.value === "khozor" ? Game.KHOZOR_TEAMS : Game.THREE_FIVE_EIGHT;
}

function chosenLevel(): number {
  return Number(byId<HTMLSelectElement>("level").value);
}

/** A refusal that names the player's table (ALREADY_SEATED): go back to it. */
function seatedAt(error: unknown): string | undefined {
  const details = errorDetails(error);
  return details.reason === "ALREADY_SEATED" ? details.metadata["tableId"] : undefined;
}

async function privateTable(): Promise<void> {
  const kozyr = state.kozyr!;
  try {
    const answer = await kozyr.matchmaking.createPrivateTable(
      create(CreatePrivateTableRequestSchema, {
        requestId: newRequestId(),
        game: chosenGame(),
        fillWithComputers: true,
        table: { computerLevel: chosenLevel() },
      }),
    );
    openTable(answer.tableId);
  } catch (error) {
    const seated = seatedAt(error);
    if (seated) openTable(seated);
    else say(errorText(error, lang()), true);
  }
}

async function queue(): Promise<void> {
  const kozyr = state.kozyr!;
  let ticketId: string;
  try {
    const answer = await kozyr.matchmaking.enterQueue(
      create(EnterQueueRequestSchema, {
        requestId: newRequestId(),
        game: chosenGame(),
        fillWithComputers: byId<HTMLInputElement>("fill-now").checked,
        table: { computerLevel: chosenLevel() },
      }),
    );
    ticketId = answer.ticketId;
  } catch (error) {
    const details = errorDetails(error);
    const seated = seatedAt(error);
    if (seated) return openTable(seated);
    if (details.reason !== "ALREADY_QUEUED" || !details.metadata["ticketId"]) {
      say(errorText(error, lang()), true);
      return;
    }
    ticketId = details.metadata["ticketId"];
  }
  say(label("searching", lang()));
  byId("cancel").hidden = false;
  byId("cancel").dataset["ticket"] = ticketId;
  state.ticket = new AbortController();
  try {
    for await (const ticket of kozyr.matchmaking.watchTicket({ ticketId }, { signal: state.ticket.signal })) {
      if (ticket.tableId) {
        byId("cancel").hidden = true;
        return openTable(ticket.tableId);
      }
    }
  } catch (error) {
    if (!state.ticket.signal.aborted) say(errorText(error, lang()), true);
  }
  byId("cancel").hidden = true;
}

async function cancelQueue(): Promise<void> {
  const ticketId = byId("cancel").dataset["ticket"];
  state.ticket?.abort();
  byId("cancel").hidden = true;
  if (ticketId) await state.kozyr!.matchmaking.cancelTicket({ ticketId }).catch(() => undefined);
  say("");
}

function openTable(tableId: string): void {
  state.session?.close();
  state.view = undefined;
  state.marks = [];
  state.marksTurn = -1n;
  history.replaceState(null, "", `${location.pathname}${location.search}#table=${encodeURIComponent(tableId)}`);
  byId("table-id-shown").textContent = tableId;
  const shown = byId("table");
  for (const key of Object.keys(shown.dataset)) delete shown.dataset[key]; // nothing of the last table
  shown.dataset["tableId"] = tableId;
  show("table");
  say(label("connecting", lang()));
  const session = new TableSession(state.kozyr!, tableId, {
    language: lang,
    onView: (view) => {
      state.view = view;
      if (document.body.dataset["screen"] === "table" && byId("status").dataset["kind"] !== "error") say("");
      render();
    },
    onEvent: sessionEvent,
  });
  state.session = session;
  void session.run();
}

function sessionEvent(event: SessionEvent): void {
  const l = lang();
  switch (event.kind) {
    case "reconnecting":
      byId("table").dataset["connected"] = "false";
      return say(label("reconnecting", l, { seconds: event.seconds.toFixed(0) }), true);
    case "reconnected":
      byId("table").dataset["connected"] = "true";
      return say(label("reconnected", l));
    case "lost":
      byId("table").dataset["pending"] = "true";
      return say(label("lost", l), true);
    case "refused":
      byId("status").dataset["reason"] = event.reason ?? "";
      return say(event.text, true);
    case "ended":
      return say(event.text, true);
  }
}

async function send(action: Action): Promise<void> {
  const session = state.session;
  const view = state.view;
  if (!session || !view) return;
  say(label("sent", lang(), { move: actionLabel(view, action, lang()) }));
  byId("status").dataset["reason"] = "";
  state.hinted = undefined;
  await session.submit(action);
}

function render(): void {
  const view = state.view;
  if (!view) return;
  const l = lang();
  const table = byId("table");
  table.dataset["version"] = String(view.version);
  table.dataset["myTurn"] = String(myTurn(view));
  table.dataset["finished"] = String(view.finished);
  table.dataset["turnNumber"] = String(view.turn?.number ?? 0n);
  table.dataset["turnKind"] = view.turn?.kind ?? "";
  table.dataset["connected"] = String(state.session?.connected ?? true);
  table.dataset["pending"] = String(state.session?.pending !== undefined);
  const turn = byId("turn");
  turn.textContent = turnLine(view, l);
  turn.classList.toggle("mine", myTurn(view));
  showClock(view, l);
  renderGame(view, l);
  const turnNumber = view.turn?.number ?? 0n;
  if (turnNumber !== state.marksTurn) {
    state.marksTurn = turnNumber;
    state.marks = defaultMarks(view);
    state.hinted = undefined;
  }
  renderHand(view, l);
  renderMoves(view, l);
  const khozor = view.gameView.case === "khozorTeams" && view.seat !== undefined;
  byId("signals").hidden = !khozor;
  if (khozor && view.gameView.case === "khozorTeams") {
    const own = view.gameView.value.signals.find((row) => row.seat === view.seat);
    byId("signal-three").setAttribute("aria-pressed", String(own?.threeSet ?? false));
    byId("signal-five").setAttribute("aria-pressed", String(own?.fiveSet ?? false));
    // the view lists a toggle only where it is true (or set): the others are refused
    const legal = new Set(view.legalActions.flatMap((a) => (a.action.case === "toggleSignal" ? [a.action.value.signal] : [])));
    for (const [id, signal] of [["signal-three", Signal.THREE_SET], ["signal-five", Signal.FIVE_SET]] as const) {
      byId(id).dataset["legal"] = String(legal.has(signal));
      byId(id).classList.toggle("playable", legal.has(signal));
    }
  }
  byId("hint").hidden = !(view.hintsAllowed && myTurn(view));
}

/** The turn clock, redrawn with every view and every second: its text, and the
 * seconds and deadline as data (tests and assistive tools read them). */
function showClock(view: TableView, l: Lang): void {
  const clock = byId("clock");
  const seconds = clockSeconds(view);
  clock.textContent = clockLine(view, l);
  clock.dataset["seconds"] = seconds === undefined ? "" : String(seconds);
  clock.dataset["deadline"] = view.turn?.deadline && seconds !== undefined ? String(view.turn.deadline.seconds) : "";
  clock.classList.toggle("mine", myTurn(view));
}

function renderHand(view: TableView, l: Lang): void {
  const list = byId("hand");
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.["card"];
  const playable = myTurn(view) ? playableCards(view) : new Set<string>();
  const hinted = new Set(state.hinted ? actionCards(state.hinted) : []);
  list.replaceChildren();
  const marks = marking(view);
  for (const code of hand(view)) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = ["card", isRed(code) ? "red" : "", playable.has(code) ? "playable" : "", hinted.has(code) ? "hinted" : ""]
      .filter(Boolean)
      .join(" ");
    button.dataset["card"] = code;
    button.textContent = cardName(code, l);
    const notes = [playable.has(code) ? label("playable", l) : "", state.marks.includes(code) ? label("marked", l) : ""];
    button.setAttribute("aria-label", [cardName(code, l), ...notes.filter(Boolean)].join(", "));
    if (marks) button.setAttribute("aria-pressed", String(state.marks.includes(code)));
    button.addEventListener("click", () => clickCard(code));
    li.append(button);
    list.append(li);
    if (code === focused) button.focus();
  }
  byId("play-marked").hidden = !(marks && myTurn(view));
}

function renderMoves(view: TableView, l: Lang): void {
  const moves = byId("moves");
  const buttons = moveButtons(view, l);
  for (const button of buttons) {
    const action = view.legalActions[Number(button.dataset["move"])]!;
    if (state.hinted && equals(ActionSchema, action, state.hinted)) button.classList.add("hinted");
    button.addEventListener("click", () => void send(action));
  }
  if (buttons.length === 0) {
    const none = document.createElement("p");
    none.textContent = label("no_moves", l);
    moves.replaceChildren(none);
  } else {
    moves.replaceChildren(...buttons);
  }
}

function clickCard(code: string): void {
  const view = state.view;
  if (!view) return;
  const action = cardAction(view, code);
  if (action) {
    void send(action);
    return;
  }
  state.marks = state.marks.includes(code) ? state.marks.filter((c) => c !== code) : [...state.marks, code];
  renderHand(view, lang());
}

function playMarked(): void {
  const view = state.view;
  const action = view && markedAction(view, state.marks);
  if (action) void send(action);
}

async function hint(): Promise<void> {
  const view = state.view;
  const action = await state.session?.hint();
  if (!view || !action || !state.view) return;
  state.hinted = action;
  if (marking(state.view)) state.marks = actionCards(action);
  say(label("hint_ready", lang(), { move: actionLabel(state.view, action, lang()) }));
  render();
  document.querySelector<HTMLElement>("#moves button.hinted, #hand .hinted")?.focus();
}

async function boot(): Promise<void> {
  if (new URLSearchParams(location.search).has("record")) window.kozyrReceived = [];
  try {
    const answer = await fetch("config.json");
    state.config = (await answer.json()) as Config;
  } catch {
    state.config = { devLogin: false };
  }
  byId("login-form").addEventListener("submit", (e) => void logIn(e as SubmitEvent));
  byId("language").addEventListener("change", applyLabels);
  byId("logout").addEventListener("click", logOut);
  byId("private").addEventListener("click", () => void privateTable());
  byId("queue").addEventListener("click", () => void queue());
  byId("cancel").addEventListener("click", () => void cancelQueue());
  byId("open-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const id = byId<HTMLInputElement>("table-id").value.trim();
    if (id) openTable(id);
  });
  byId("play-marked").addEventListener("click", playMarked);
  byId("hint").addEventListener("click", () => void hint());
  byId("signal-three").addEventListener("click", () => void send(signalAction(Signal.THREE_SET)));
  byId("signal-five").addEventListener("click", () => void send(signalAction(Signal.FIVE_SET)));
  byId("leave").addEventListener("click", () => {
    state.session?.close();
    state.session = undefined;
    history.replaceState(null, "", location.pathname + location.search);
    show("lobby");
    say("");
  });
  setInterval(() => {
    if (state.view) showClock(state.view, lang());
  }, 1000);
  const kept = sessionStorage.getItem(LOGIN_KEY);
  const browser = parseLang(new URLSearchParams(location.search).get("lang") ?? navigator.language);
  byId<HTMLSelectElement>("language").value = browser;
  byId("player").closest("p")!.hidden = !state.config.devLogin;
  if (kept) {
    start(JSON.parse(kept) as Login);
  } else {
    applyLabels();
    show("login");
    byId(state.config.devLogin ? "player" : "token-input").focus();
  }
  document.body.dataset["ready"] = "true";
}

void boot();
