/**
 * A seat's view → the table's DOM. Only what the view holds is shown (the page keeps
 * no cards of its own); every text goes in through `textContent`, never as HTML.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ComputerLevel, Presence, SeatControl } from "../gen/kozyr/common/v1/seats_pb.js";
import type { TableView } from "../gen/kozyr/table/v1/views_pb.js";
import { actionLabel, myTurn, seatName } from "./moves.js";
import { cardName, contractName, label, phaseName, roleName, type Lang } from "./texts.js";

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

function item(text: string, className = ""): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

const names = (codes: readonly string[], lang: Lang) => codes.map((c) => cardName(c, lang)).join(" ");

/** "YOUR TURN · play · Turn 7", "Waiting for computer 1 · …", "GAME OVER". */
export function turnLine(view: TableView, lang: Lang): string {
  if (view.finished) return label("game_over", lang);
  const turn = view.turn;
  const kind = phaseName(turn?.kind ?? "", lang);
  const number = `${label("turn", lang)} ${turn?.number ?? 0n}`;
  if (myTurn(view)) return `${label("your_turn", lang)} · ${kind} · ${number}`;
  const waiting = (turn?.seats ?? []).map((s) => seatName(view, s, lang)).join(", ");
  return `${label("waiting_for", lang)} ${waiting || "…"} · ${kind} · ${number}`;
}

/** Whole seconds before the table plays the turn's default move (the clock service
 * calls ExpireTurn at the view's `turn.deadline`); undefined without a deadline or once
 * the game is over. Counted on the browser's clock: a page never asks for the time. */
export function clockSeconds(view: TableView, now: Date = new Date()): number | undefined {
  const deadline = view.turn?.deadline;
  if (!deadline || view.finished) return undefined;
  return Math.max(0, Math.ceil((timestampDate(deadline).getTime() - now.getTime()) / 1000));
}

/** "You: 42 s left" on the seat's own turn, "42 s left" on another's ("" without a clock). */
export function clockLine(view: TableView, lang: Lang, now: Date = new Date()): string {
  const seconds = clockSeconds(view, now);
  if (seconds === undefined) return "";
  const left = label("seconds_left", lang, { seconds });
  return myTurn(view) ? `${label("your_time", lang)}: ${left}` : left;
}

function seatState(view: TableView, seat: number, lang: Lang): string {
  const info = view.seats.find((s) => s.seat === seat);
  if (!info) return "";
  const control =
    info.control === SeatControl.COMPUTER
      ? `${label("computer", lang)}${info.level === ComputerLevel.UNSPECIFIED ? "" : ` ${ComputerLevel[info.level].toLowerCase()}`}`
      : info.control === SeatControl.ABSENT
        ? label("absent", lang)
        : label("person", lang);
  const presence =
    info.presence === Presence.ONLINE || info.online
      ? label("online", lang)
      : info.presence === Presence.OFFLINE
        ? label("offline", lang)
        : label("presence_unknown", lang);
  return `${control} · ${presence}`;
}

/** The game's own part of the table: info line, seats, trick or pile, extras, result. */
export function renderGame(view: TableView, lang: Lang): void {
  const seats = byId("seats");
  const trick = byId("trick");
  seats.replaceChildren();
  trick.replaceChildren();
  byId("last-trick").textContent = "";
  byId("extra").textContent = "";
  byId("result").textContent = "";
  const turnSeats = view.turn?.seats ?? [];
  const seatItem = (seat: number, text: string) =>
    item(text, [turnSeats.includes(seat) ? "turn" : "", seat === view.seat ? "me" : ""].join(" ").trim());
  const game = view.gameView;
  if (game.case === "threeFiveEight") {
    const g = game.value;
    const parts = [
      `${label("deal", lang)} ${g.dealNumber}/${g.dealsTotal}`,
      phaseName(g.phase, lang),
      g.contract ? `${label("contract", lang)}: ${contractName(g.contract, lang)}` : "",
      `${label("trump", lang)}: ${g.trump ? cardName(`2${g.trump}`, lang).slice(1) : label("no_trump", lang)}`,
    ];
    byId("info").textContent = parts.filter(Boolean).join(" · ");
    for (const info of view.seats) {
      const s = info.seat;
      const role = g.roles[s] ? roleName(g.roles[s]!, lang) : "";
      const tricks = g.targets.length ? `${label("tricks", lang)} ${g.tricks[s] ?? 0} ${label("of", lang)} ${g.targets[s]}` : "";
      const text = [
        `${label("seat", lang)} ${s} ${seatName(view, s, lang)} [${seatState(view, s, lang)}]`,
        role,
        tricks,
        `${g.handCounts[s] ?? 0} ${label("cards", lang)}`,
        `${g.totals[s] ?? 0} ${label("points", lang)}`,
      ];
      seats.append(seatItem(s, text.filter(Boolean).join(" · ")));
    }
    byId("trick-title").textContent = `${label("trick", lang)} ${g.tricksPlayed + (g.trick.length ? 1 : 0)}`;
    for (const played of g.trick) {
      trick.append(item(`${seatName(view, played.seat, lang)}: ${cardName(played.card, lang)}`));
    }
    if (g.lastTrick) {
      const cards = g.lastTrick.cards.map((c) => cardName(c.card, lang)).join(" ");
      byId("last-trick").textContent =
        `${label("last_trick", lang)}: ${cards} — ${label("taken_by", lang)} ${seatName(view, g.lastTrick.winner, lang)}`;
    }
    const extra = [
      g.talon.length ? `${label("talon", lang)}: ${names(g.talon, lang)}` : "",
      g.discards.length ? `${label("discards", lang)}: ${names(g.discards, lang)}` : "",
    ];
    byId("extra").textContent = extra.filter(Boolean).join(" · ");
    if (g.result) {
      byId("result").textContent = view.seats
        .map((info) => `${seatName(view, info.seat, lang)}: ${label("place", lang)} ${g.result!.places[info.seat]} · ${g.result!.totals[info.seat]} ${label("points", lang)}`)
        .join(" — ");
    }
  } else if (game.case === "khozorTeams") {
    const g = game.value;
    const parts = [
      `${label("round", lang)} ${g.round}`,
      phaseName(g.phase, lang),
      `${label("trump", lang)}: ${g.trump ? cardName(`2${g.trump}`, lang).slice(1) : "—"}`,
      `${label("wins", lang)}: A ${g.wins["A"] ?? 0} – B ${g.wins["B"] ?? 0}`,
      g.openingTeam ? `${label("team", lang)} ${g.openingTeam} ${label("opens", lang)}` : "",
      g.opener !== undefined ? `${label("opener", lang)}: ${seatName(view, g.opener, lang)}` : "",
    ];
    byId("info").textContent = parts.filter(Boolean).join(" · ");
    for (const info of view.seats) {
      const s = info.seat;
      const team = s % 2 === 0 ? "A" : "B";
      const text = `${label("seat", lang)} ${s} (${label("team", lang)} ${team}) ${seatName(view, s, lang)} [${seatState(view, s, lang)}] · ${g.handCounts[s] ?? 0} ${label("cards", lang)}`;
      seats.append(seatItem(s, text));
    }
    byId("trick-title").textContent = label("pile", lang);
    for (const play of g.pile) {
      const verb = play.kind === "beat" ? label("beats", lang) : label("leads", lang);
      trick.append(item(`${seatName(view, play.seat, lang)} ${verb} ${names(play.cards, lang)}`));
    }
    byId("extra").textContent = `${label("reserve", lang)}: ${g.reserveCount} · ${g.sleepingCount} ${label("asleep", lang)}`;
    const signals = byId("team-signals");
    signals.replaceChildren();
    for (const row of g.signals) {
      const set = [row.threeSet ? label("three_set", lang) : "", row.fiveSet ? label("five_set", lang) : ""].filter(Boolean);
      signals.append(item(`${seatName(view, row.seat, lang)}: ${set.join(", ") || "—"}`));
    }
    if (g.matchWinner) byId("result").textContent = label("match_winner", lang, { team: g.matchWinner });
  }
}

/** A button per legal move, labelled in the player's language. */
export function moveButtons(view: TableView, lang: Lang): HTMLButtonElement[] {
  return view.legalActions
    .map((action, index) => ({ action, index }))
    .filter(({ action }) => action.action.case !== "toggleSignal")
    .map(({ action, index }) => {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset["move"] = String(index);
      button.dataset["kind"] = action.action.case ?? "";
      button.textContent = actionLabel(view, action, lang);
      return button;
    });
}
