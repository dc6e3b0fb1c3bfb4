/**
 * What a click means, from the seat's view alone — the page knows no rules (as
 * `kozyr play`'s controls.py): the view lists the legal moves; a card clicked is the
 * move of the decision the seat faces (or, out of turn, a play of it, which the table
 * refuses with its reason); the decisions of several cards (3-5-8's discard, Khözör's
 * leads and beats) mark cards first and send the marked ones.
 */
import { create, equals } from "@bufbuild/protobuf";
import { Game } from "../gen/kozyr/common/v1/games_pb.js";
import { ActionSchema, Contract, Signal, type Action } from "../gen/kozyr/table/v1/actions_pb.js";
import type { TableView } from "../gen/kozyr/table/v1/views_pb.js";
import { cardName, contractName, label, type Lang } from "./texts.js";

export const CONTRACT_CODES: Record<Contract, string> = {
  [Contract.UNSPECIFIED]: "?",
  [Contract.SPADES]: "S",
  [Contract.HEARTS]: "H",
  [Contract.DIAMONDS]: "D",
  [Contract.CLUBS]: "C",
  [Contract.NO_TRUMP]: "NT",
  [Contract.MINIMUM_TRICKS]: "MT",
};

type Case = NonNullable<Action["action"]["case"]>;
/** The decisions made by marking several cards, then sending them. */
/** The table's own turn while the first deal waits for the players' client seeds. */
export const CLIENT_SEED = "client_seed";

const MARKING: ReadonlySet<Case> = new Set<Case>(["discard", "lead", "beat"]);

/** The view's own hand (either game). */
export function hand(view: TableView): string[] {
  const game = view.gameView;
  if (game.case === "threeFiveEight" || game.case === "khozorTeams") return [...game.value.hand];
  return [];
}

/** Whether the table waits for this seat now. */
/** Whether the player must act now. Never in the first deal's "client_seed" turn: the
 * session sends the seat's client seed by itself, so there is nothing to do but wait. */
export function myTurn(view: TableView): boolean {
  return (
    view.seat !== undefined &&
    !view.finished &&
    view.turn?.kind !== CLIENT_SEED &&
    (view.turn?.seats ?? []).includes(view.seat)
  );
}

/** The kinds of move the view lists ("playCard", "lead" …). */
export function legalCases(view: TableView): Set<Case> {
  return new Set(view.legalActions.map((a) => a.action.case).filter((c): c is Case => c !== undefined));
}

/** Whether clicking a card marks it (the decision takes several cards) rather than sends. */
export function marking(view: TableView): boolean {
  const cases = legalCases(view);
  return [...cases].some((c) => MARKING.has(c)) && !cases.has("playCard") && !cases.has("giveCard");
}

/** The cards a legal move of this kind plays (to mark the playable ones). */
export function playableCards(view: TableView): Set<string> {
  const cards = new Set<string>();
  for (const action of view.legalActions) {
    for (const card of actionCards(action)) cards.add(card);
  }
  return cards;
}

/** The card codes a move names. */
export function actionCards(action: Action): string[] {
  const a = action.action;
  switch (a.case) {
    case "playCard":
    case "giveCard":
      return a.value.card ? [a.value.card.code] : [];
    case "discard":
    case "lead":
    case "beat":
      return a.value.cards.map((c) => c.code);
    default:
      return [];
  }
}

const cards = (codes: readonly string[]) => codes.map((code) => ({ code }));

/** The move a click on `card` sends (undefined: the click marks it). Out of turn, or a
 * card no listed move plays, still sends the decision's move: the table explains why
 * not, in the player's language. */
export function cardAction(view: TableView, card: string): Action | undefined {
  if (marking(view)) return undefined;
  const cases = legalCases(view);
  if (cases.has("giveCard")) {
    return create(ActionSchema, { action: { case: "giveCard", value: { card: { code: card } } } });
  }
  if (view.game === Game.KHOZOR_TEAMS) {
    return create(ActionSchema, { action: { case: "lead", value: { cards: cards([card]) } } });
  }
  return create(ActionSchema, { action: { case: "playCard", value: { card: { code: card } } } });
}

/** The move of the marked cards: a discard, a lead or a beat, as the view's moves are. */
export function markedAction(view: TableView, marked: readonly string[]): Action | undefined {
  const cases = legalCases(view);
  const value = { cards: cards(marked) };
  if (cases.has("discard")) return create(ActionSchema, { action: { case: "discard", value } });
  if (cases.has("beat")) return create(ActionSchema, { action: { case: "beat", value } });
  if (cases.has("lead")) return create(ActionSchema, { action: { case: "lead", value } });
  return undefined;
}

/** The cards marked when a turn starts: the listed discard (the default four). */
export function defaultMarks(view: TableView): string[] {
  const discard = view.legalActions.find((a) => a.action.case === "discard");
  return discard ? actionCards(discard) : [];
}

/** Whether a move is one the view lists. */
export function isListed(view: TableView, action: Action): boolean {
  return view.legalActions.some((a) => equals(ActionSchema, a, action));
}

/** A signal toggle (legal at any time: no version is pinned to it). */
export function signalAction(signal: Signal): Action {
  return create(ActionSchema, { action: { case: "toggleSignal", value: { signal } } });
}

/** Who sits at `seat`, as the page names him. */
export function seatName(view: TableView, seat: number, lang: Lang): string {
  const info = view.seats.find((s) => s.seat === seat);
  const name = info?.playerId || label("computer_n", lang, { n: seat });
  return seat === view.seat ? `${name} (${label("you", lang)})` : name;
}

/** A move in words: "Play D♠", "Contract: Fără atu", "Pick up the pile" … */
export function actionLabel(view: TableView, action: Action, lang: Lang): string {
  const a = action.action;
  const named = (codes: string[]) => codes.map((c) => cardName(c, lang)).join(" ");
  switch (a.case) {
    case "playCard":
      return label("play_card", lang, { card: named(actionCards(action)) });
    case "giveCard":
      return label("give_card", lang, { card: named(actionCards(action)) });
    case "discard":
      return label("discard", lang, { cards: named(actionCards(action)) });
    case "chooseContract":
      return label("choose_contract", lang, { contract: contractName(CONTRACT_CODES[a.value.contract], lang) });
    case "lead":
      return label("lead", lang, { cards: named(actionCards(action)) });
    case "beat":
      return label("beat", lang, { cards: named(actionCards(action)) });
    case "pickUp":
      return label("pick_up", lang);
    case "confirmOpener":
      return label("confirm_opener", lang, { seat: seatName(view, a.value.openerSeat, lang) });
    case "toggleSignal":
      return label("toggle_signal", lang, {
        signal: label(a.value.signal === Signal.THREE_SET ? "three_set" : "five_set", lang),
      });
    default:
      return "?";
  }
}
