/** The page's pure parts: card and game names per language, what a click sends. */
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Game } from "../src/gen/kozyr/common/v1/games_pb.js";
import { ActionSchema, Contract } from "../src/gen/kozyr/table/v1/actions_pb.js";
import { TableViewSchema } from "../src/gen/kozyr/table/v1/views_pb.js";
import { actionLabel, cardAction, defaultMarks, marking, markedAction, myTurn, playableCards } from "../src/page/moves.js";
import { clockLine, clockSeconds } from "../src/page/render.js";
import { cardName, contractName, label, parseLang, phaseName } from "../src/page/texts.js";

const play = (code: string) => create(ActionSchema, { action: { case: "playCard", value: { card: { code } } } });
const cards = (...codes: string[]) => codes.map((code) => ({ code }));

function view358(legal: ReturnType<typeof play>[], seats = [0]) {
  return create(TableViewSchema, {
    game: Game.THREE_FIVE_EIGHT,
    version: 7n,
    seat: 0,
    turn: { number: 3n, kind: "play", seats },
    legalActions: legal,
    seats: [{ seat: 0, playerId: "ana" }, { seat: 1 }, { seat: 2 }],
    gameView: { case: "threeFiveEight", value: { hand: ["QS", "10H", "7C"] } },
  });
}

describe("texts", () => {
  test("cards by their names in each language", () => {
    assert.equal(cardName("QS", "en"), "Q♠");
    assert.equal(cardName("QS", "ro"), "D♠");
    assert.equal(cardName("JH", "ro"), "V♥");
    assert.equal(cardName("JH", "it"), "F♥");
    assert.equal(cardName("KD", "it"), "R♦");
    assert.equal(cardName("10C", "ro"), "10♣");
    assert.equal(cardName("JK-red", "ro"), "joker roșu");
    assert.equal(cardName("JK-gray", "it"), "jolly grigio");
  });

  test("labels, contracts and languages", () => {
    assert.equal(label("your_turn", "ro"), "RÂNDUL TĂU");
    assert.equal(label("sent", "it", { move: "x" }), "Inviato: x");
    assert.equal(contractName("NT", "ro"), "Fără atu");
    assert.equal(parseLang("ro-RO"), "ro");
    assert.equal(parseLang("de"), "en");
    assert.equal(parseLang(undefined), "en");
  });
});

describe("moves", () => {
  test("a card clicked plays it, listed or not (the table judges)", () => {
    const view = view358([play("QS")]);
    assert.equal(myTurn(view), true);
    assert.deepEqual([...playableCards(view)], ["QS"]);
    assert.equal(marking(view), false);
    assert.deepEqual(cardAction(view, "7C"), play("7C"));
  });

  test("the first deal's seed window is never the player's turn (the session seeds)", () => {
    const view = view358([], [0, 2]);
    view.turn!.kind = "client_seed";
    assert.equal(myTurn(view), false);
    assert.equal(phaseName("client_seed", "it"), "Semi della prima mano");
  });

  test("out of turn: nothing playable, a click still sends the play", () => {
    const view = view358([], [1]);
    assert.equal(myTurn(view), false);
    assert.equal(playableCards(view).size, 0);
    assert.deepEqual(cardAction(view, "QS"), play("QS"));
  });

  test("a discard marks cards, starting from the listed default four", () => {
    const discard = create(ActionSchema, { action: { case: "discard", value: { cards: cards("7C", "10H", "QS", "2D") } } });
    const view = view358([discard]);
    assert.equal(marking(view), true);
    assert.equal(cardAction(view, "QS"), undefined);
    assert.deepEqual(defaultMarks(view), ["7C", "10H", "QS", "2D"]);
    const sent = markedAction(view, ["7C", "QS"]);
    assert.equal(sent?.action.case, "discard");
    assert.deepEqual(sent?.action.case === "discard" && sent.action.value.cards.map((c) => c.code), ["7C", "QS"]);
  });

  test("Khözör: a beat of the marked cards; out of turn a card leads", () => {
    const beat = create(ActionSchema, { action: { case: "beat", value: { cards: cards("9S") } } });
    const pickUp = create(ActionSchema, { action: { case: "pickUp", value: {} } });
    const view = create(TableViewSchema, {
      game: Game.KHOZOR_TEAMS,
      seat: 2,
      turn: { number: 9n, kind: "defend", seats: [2] },
      legalActions: [beat, pickUp],
      gameView: { case: "khozorTeams", value: { hand: ["9S", "7H"] } },
    });
    assert.equal(marking(view), true);
    assert.equal(markedAction(view, ["9S"])?.action.case, "beat");
    const idle = create(TableViewSchema, { game: Game.KHOZOR_TEAMS, seat: 2, turn: { seats: [3] } });
    assert.equal(cardAction(idle, "7H")?.action.case, "lead");
  });

  test("moves in words", () => {
    const view = view358([]);
    const contract = create(ActionSchema, { action: { case: "chooseContract", value: { contract: Contract.NO_TRUMP } } });
    assert.equal(actionLabel(view, contract, "ro"), "Joc: Fără atu");
    assert.equal(actionLabel(view, play("QS"), "it"), "Gioca D♠");
    const opener = create(ActionSchema, { action: { case: "confirmOpener", value: { openerSeat: 0 } } });
    assert.equal(actionLabel(view, opener, "en"), "Opener: ana (you)");
  });
});

describe("the turn clock", () => {
  const now = new Date("2026-12-03T10:00:00.000Z");
  const at = (seconds: number) =>
    create(TimestampSchema, { seconds: BigInt(Math.floor(now.getTime() / 1000 + seconds)), nanos: 300_000_000 });

  test("the seconds left until the deadline, rounded up, never below 0", () => {
    const view = view358([play("QS")]);
    assert.equal(clockSeconds(view, now), undefined);
    view.turn!.deadline = at(41);
    assert.equal(clockSeconds(view, now), 42);
    assert.equal(clockSeconds(view, new Date(now.getTime() + 2_000)), 40);
    assert.equal(clockSeconds(view, new Date(now.getTime() + 60_000)), 0);
    view.finished = true;
    assert.equal(clockSeconds(view, now), undefined);
    assert.equal(clockLine(view, "en", now), "");
  });

  test("whose time it is, in the player's language", () => {
    const mine = view358([play("QS")]);
    mine.turn!.deadline = at(9);
    assert.equal(clockLine(mine, "en", now), "Your time: 10 s left");
    assert.equal(clockLine(mine, "ro", now), "Timpul tău: 10 s rămase");
    const theirs = view358([], [1]);
    theirs.turn!.deadline = at(9);
    assert.equal(clockLine(theirs, "it", now), "10 s rimasti");
  });
});
