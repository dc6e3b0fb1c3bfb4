// The web table driven in Debian's Chromium by playwright-core, as a person would: log
// in, open a table, click. One scenario per run; pytest (tests/e2e/web/) starts the real
// stack — table, matchmaking, bots, the gRPC-Web edge and the page server — runs
//   node drive.mjs SCENARIO ARGS.json OUT.json
// and judges OUT.json: what the page showed, and every message it received
// (`?record=1`) for the leak checker. Screenshots go to ARGS.shots. Exit 1: a step
// failed (its message and a screenshot of the failure are in OUT.json and stderr).
import { chromium } from "playwright-core";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const [scenario, argsPath, outPath] = process.argv.slice(2);
const args = JSON.parse(readFileSync(argsPath, "utf8"));
const out = { scenario, shots: [], received: [], steps: [] };
const STEP_MS = args.stepMs ?? 30_000;

function note(text) {
  out.steps.push(`${((Date.now() - started) / 1000).toFixed(1)}s ${text}`);
}
const started = Date.now();

async function shot(page, name) {
  const path = `${args.shots}/${String(out.shots.length + 1).padStart(2, "0")}-${name}.png`;
  await page.screenshot({ path, fullPage: true });
  out.shots.push(path);
}

/** Everything the page's client received (`?record=1`), as one JSON string: playwright
 * copies a string at once, where an object graph of a game's ~1300 views took 4 s. */
async function received(page) {
  out.received.push(...JSON.parse(await page.evaluate(() => JSON.stringify(window.kozyrReceived ?? []))));
}

async function table(page) {
  return page.evaluate(() => ({ ...document.getElementById("table").dataset }));
}

/** The turn clock as shown: its text, its seconds and deadline, the turn it is for. */
async function clock(page) {
  return page.evaluate(() => {
    const c = document.getElementById("clock");
    const t = document.getElementById("table").dataset;
    return { text: c.textContent, seconds: c.dataset.seconds, deadline: c.dataset.deadline, turnNumber: t.turnNumber };
  });
}

async function status(page) {
  return page.evaluate(() => {
    const s = document.getElementById("status");
    return { text: s.textContent, kind: s.dataset.kind ?? "", reason: s.dataset.reason ?? "" };
  });
}

async function logIn(page, player, lang) {
  await page.goto(`${args.pageUrl}?record=1`);
  await page.waitForSelector("body[data-ready=true]");
  await page.getByLabel(/name|nume|nome/i).fill(player);
  await page.selectOption("#language", lang);
  await page.click("#login-button");
  await page.waitForSelector("body[data-screen=lobby]");
  note(`logged in as ${player} (${lang})`);
}

async function openPrivate(page, game) {
  await page.check(`input[name="game"][value="${game}"]`);
  await page.selectOption("#level", "1");
  await page.click("#private");
  await page.waitForSelector("#table[data-version]", { timeout: STEP_MS });
  const shown = await table(page);
  out.tableId = shown.tableId;
  note(`table ${shown.tableId} at v${shown.version}`);
}

/** The lobby's "open a table by its id", typed and sent with Enter (its label in any
 * of the page's languages). */
async function openById(page, tableId) {
  await page.getByLabel(/Open a table by its id|Deschide o masă după id|Apri un tavolo dal suo id/).fill(tableId);
  await page.keyboard.press("Enter");
  await page.waitForSelector("#table[data-version]", { timeout: STEP_MS });
  const shown = await table(page);
  note(`table ${shown.tableId} opened by its id at v${shown.version}`);
  return shown;
}

/** Wait until it is this seat's turn or the game is over; false when over. */
async function awaitTurn(page) {
  await page.waitForSelector('#table[data-my-turn="true"], #table[data-finished="true"]', { timeout: STEP_MS });
  return (await table(page)).finished !== "true";
}

/** Where the page's "back to the lobby" button is (in the document, not the viewport),
 * whether it is above everything the game changes (the turn line first), and how many
 * moves are listed now. */
async function leavePlace(page) {
  return page.evaluate(() => {
    const leave = document.getElementById("leave").getBoundingClientRect();
    return {
      top: leave.top + window.scrollY,
      abovePlay: leave.bottom <= document.getElementById("turn").getBoundingClientRect().top,
      moves: document.querySelectorAll("#moves button").length,
    };
  });
}

/** One move by clicking: a playable card where a card is the move, else the first
 * listed move (a contract, the default discard, a Khözör lead …). */
async function clickMove(page) {
  const before = await table(page);
  const card = page.locator("#hand .card.playable:not([aria-pressed])").first();
  let what;
  if (await card.count()) {
    what = `card ${await card.getAttribute("data-card")}`;
    await card.click();
  } else {
    const move = page.locator("#moves button").first();
    what = `move ${await move.textContent()}`;
    await move.click();
  }
  await page.waitForFunction(
    (turn) => {
      const t = document.getElementById("table").dataset;
      const s = document.getElementById("status").dataset;
      return t.turnNumber !== turn || t.finished === "true" || s.kind === "error";
    },
    before.turnNumber,
    { timeout: STEP_MS },
  );
  const said = await status(page);
  if (said.kind === "error") throw new Error(`the table refused ${what}: ${said.text}`);
  return what;
}

/** The seat's next move, found inside the page once the turn `after` is over: the page
 * watched (a MutationObserver, no polling) until it shows the seat's turn, the game's
 * end or a refusal; the thing to click (a playable card, else the first listed move)
 * scrolled into view, and where its centre is. One round trip per move, where
 * playwright's locators take six or more (clickMove). A click of `aimed` (the last
 * target) that hit no button at all (a view redrawn between aiming and clicking moved
 * it) is seen at once — the page's click listener (`watchClicks`) says what was hit —
 * and the target is aimed at again (`missed`). */
async function nextMove(page, after, aimed = "") {
  const found = await page.evaluate(
    ([after, aimed, stepMs]) =>
      new Promise((resolve) => {
        const aim = (t, card, target) => {
          target.scrollIntoView({ block: "center" });
          const box = target.getBoundingClientRect();
          window.kozyrLastClick = undefined;
          return {
            turnNumber: t.turnNumber,
            what: card ? `card ${card.dataset.card}` : `move ${target.textContent}`,
            x: box.x + box.width / 2,
            y: box.y + box.height / 2,
          };
        };
        const look = () => {
          const t = document.getElementById("table").dataset;
          const status = document.getElementById("status");
          if (status.dataset.kind === "error") return { refused: status.textContent };
          // no button hit: nothing was sent, so clicking again is safe (a button hit,
          // the aimed one or another, sent its move: the table answers it)
          const last = window.kozyrLastClick;
          const missed = t.turnNumber === after && aimed && (last === undefined || last === "nothing");
          if (t.turnNumber === after && !missed) return undefined;
          if (t.finished === "true") return { finished: true };
          if (t.myTurn !== "true") return undefined;
          const card = document.querySelector("#hand .card.playable:not([aria-pressed])");
          const target = card ?? document.querySelector("#moves button");
          if (!target) return undefined;
          return { ...aim(t, card, target), ...(missed ? { missed: last ?? "nothing" } : {}) };
        };
        const now = look();
        if (now) return resolve(now);
        const observer = new MutationObserver(() => {
          const seen = look();
          if (!seen) return;
          observer.disconnect();
          clearTimeout(timer);
          resolve(seen);
        });
        const timer = setTimeout(() => {
          observer.disconnect();
          resolve({ timedOut: document.getElementById("table").dataset.turnNumber });
        }, stepMs);
        observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      }),
    [after, aimed, STEP_MS],
  );
  if (found.refused) throw new Error(`the table refused a move: ${found.refused}`);
  if (found.timedOut) throw new Error(`no turn of the seat after turn ${after} in ${STEP_MS} ms`);
  return found;
}

/** Record in the page what each click lands on (`window.kozyrLastClick`, as nextMove
 * names its targets), for nextMove to see a click that missed. */
async function watchClicks(page) {
  await page.evaluate(() =>
    document.addEventListener(
      "click",
      (event) => {
        const button = event.target instanceof Element ? event.target.closest("button") : null;
        const card = button?.dataset.card;
        window.kozyrLastClick = !button ? "nothing" : card ? `card ${card}` : `move ${button.textContent}`;
      },
      true,
    ),
  );
}

/** Ask pytest (which waits for `name` in the shots folder's parent) to act, and wait
 * for its answer file. */
async function handshake(name, answer) {
  writeFileSync(`${args.shots}/../${name}`, "");
  const path = `${args.shots}/../${answer}`;
  const deadline = Date.now() + STEP_MS;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`pytest did not answer ${name} with ${answer}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The edge goes away under the page (pytest kills it) on the seat's turn: the page
 * says it reconnects; a card clicked meanwhile is kept; once the edge is back (pytest
 * starts it again) the page connects again and the move is applied. */
async function dropAndReconnect(page) {
  if (!(await awaitTurn(page))) return;
  const before = await table(page);
  await handshake("drop-now", "dropped");
  await page.waitForSelector('#table[data-connected="false"]', { timeout: STEP_MS });
  out.dropStatus = await status(page);
  const card = page.locator("#hand .card.playable").first();
  out.pendingCard = await card.getAttribute("data-card");
  await card.click();
  await page.waitForSelector('#table[data-pending="true"]', { timeout: STEP_MS });
  out.lostStatus = await status(page);
  await shot(page, "dropped");
  await handshake("back-now", "back");
  await page.waitForFunction(
    (turn) => document.getElementById("table").dataset.turnNumber !== turn,
    before.turnNumber,
    { timeout: STEP_MS },
  );
  out.reconnected = await table(page);
  out.reconnectStatus = await status(page);
  note(`reconnected at v${out.reconnected.version}, the pending ${out.pendingCard} applied`);
  await shot(page, "reconnected");
}

const scenarios = {
  /** A 3-5-8 game played to its end against two computers, every move a click, from
   * a private table opened in the lobby. */
  async game358(page) {
    await logIn(page, args.player, "en");
    await openPrivate(page, "358");
    await watchClicks(page);
    let clicks = 0;
    const kinds = {};
    out.missed = [];
    for (let move = await nextMove(page, ""); !move.finished; move = await nextMove(page, move.turnNumber, move.what)) {
      if (clicks === 0) await shot(page, "first-turn");
      if (move.missed) out.missed.push(`${move.missed} (turn ${move.turnNumber})`);
      await page.mouse.click(move.x, move.y); // a person's click where the card or move is
      if (move.missed) continue;
      const kind = move.what.split(" ")[0];
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      clicks += 1;
      if (clicks === 40) await shot(page, "mid-game");
      if (clicks % 50 === 0) note(`${clicks} clicks, v${(await table(page)).version}`);
    }
    note(`game over after ${clicks} clicks${out.missed.length ? `, clicked again: ${out.missed.join(", ")}` : ""}`);
    await shot(page, "game-over");
    out.clicks = clicks;
    out.kinds = kinds;
    out.result = await page.textContent("#result");
    out.turnLine = await page.textContent("#turn");
    await received(page);
  },

  /** The queue: matchmaking's ticket watched through the edge (WatchTicket) until it
   * names a table, computers taking the free seats (the box ticked). Then the turn
   * clock, with the clock service running `clock_ahead` seconds early: on the seat's
   * turn it shows the time left and counts down, the seat shows online (the page's
   * heartbeats), and nobody clicks: the clock plays the default move when the time is
   * up, and the seat's next turn shows a new deadline. */
  async queue(page) {
    await logIn(page, args.player, "en");
    await page.check('input[name="game"][value="358"]');
    await page.getByLabel("computers take the free seats at once").check();
    await page.click("#queue");
    await page.waitForSelector("#table[data-version]", { timeout: STEP_MS });
    out.tableId = (await table(page)).tableId;
    note(`queued, seated at ${out.tableId}`);
    out.hintHidden = await page.locator("#hint").isHidden();
    await page.waitForSelector('#seats li.me:has-text("online")', { timeout: STEP_MS });
    out.ownSeat = await page.textContent("#seats li.me");
    // a turn of the seat seen counting down (on a loaded machine the page may see a
    // turn too late to watch a second go by before the clock ends it: then the next)
    for (let turns = 0; !out.clockLater; turns++) {
      if (turns === 3 || !(await awaitTurn(page))) throw new Error("no turn of the seat seen counting down");
      out.clockFirst = await clock(page);
      const ticked = await page.waitForFunction(
        ({ seconds, turn }) => {
          const c = document.getElementById("clock").dataset;
          const now = document.getElementById("table").dataset.turnNumber;
          if (now !== turn) return "turn over";
          return Number(c.seconds) < seconds ? "ticked" : false;
        },
        { seconds: Number(out.clockFirst.seconds), turn: out.clockFirst.turnNumber },
        { timeout: STEP_MS },
      );
      if ((await ticked.jsonValue()) === "ticked") out.clockLater = await clock(page);
    }
    note(`clock ${out.clockFirst.text} → ${out.clockLater.text}; seat: ${out.ownSeat}`);
    await shot(page, "turn-clock");
    await page.waitForFunction(
      (turn) => document.getElementById("table").dataset.turnNumber !== turn,
      out.clockFirst.turnNumber,
      { timeout: STEP_MS },
    );
    out.afterExpiry = await table(page);
    note(`turn ${out.clockFirst.turnNumber} ran out: now turn ${out.afterExpiry.turnNumber}`);
    if (await awaitTurn(page)) out.clockNext = await clock(page);
    note(`the seat's next turn: ${JSON.stringify(out.clockNext)}`);
    await shot(page, "next-turn-clock");
    await received(page);
  },

  /** A refusal explained in Romanian, then a reload that resumes the same table. */
  async refusalReload(page) {
    await logIn(page, args.player, "ro");
    await openPrivate(page, "358");
    // on its turn the table waits for the seat: a card no listed move plays (any card
    // while a contract is chosen, an off-suit one …) is refused, whatever the computers do
    const unplayable = page.locator("#hand .card:not(.playable)");
    // a hint first (a private table allows them): the bots' move, outlined and focused
    if (!(await awaitTurn(page))) throw new Error("the game ended before a turn");
    await page.click("#hint");
    await page.waitForSelector("#moves button.hinted, #hand .card.hinted", { timeout: STEP_MS });
    out.hint = await status(page);
    out.hintFocused = await page.evaluate(() => document.activeElement?.classList.contains("hinted") ?? false);
    for (let moves = 0; ; moves++) {
      if (!(await awaitTurn(page)) || moves > 40) throw new Error("no card to refuse");
      if (await unplayable.count()) break;
      await clickMove(page);
    }
    out.clicked = await unplayable.first().getAttribute("data-card");
    await unplayable.first().click();
    await page.waitForSelector('#status[data-kind="error"]', { timeout: STEP_MS });
    out.refusal = await status(page);
    out.lang = await page.evaluate(() => document.documentElement.lang);
    out.turnLineRo = await page.textContent("#turn");
    await shot(page, "refusal-ro");
    // play on a little, so the reload comes mid-game; the way back to the lobby stays
    // where it is whether moves are listed or not (a button moving while pressed
    // loses the click: the release lands elsewhere)
    out.leavePlaces = [];
    for (let i = 0; i < 3 && (await awaitTurn(page)); i++) {
      out.leavePlaces.push(await leavePlace(page));
      await clickMove(page);
      out.leavePlaces.push(await leavePlace(page));
    }
    const before = await table(page);
    out.before = before;
    await received(page);
    await shot(page, "before-reload");
    await page.reload();
    await page.waitForSelector("#table[data-version]", { timeout: STEP_MS });
    await page.waitForFunction((v) => Number(document.getElementById("table").dataset.version) >= v, Number(before.version));
    out.after = await table(page);
    out.afterHand = await page.locator("#hand .card").count();
    note(`reloaded at v${before.version}, shown again at v${out.after.version}`);
    await shot(page, "after-reload");
    if (await awaitTurn(page)) out.afterReloadMove = await clickMove(page);
    // back to the lobby, and the same table again by its id (the lobby's form)
    await page.click("#leave");
    await page.waitForSelector("body[data-screen=lobby]");
    out.reopened = await openById(page, out.tableId);
    out.final = await table(page);
    if (args.drop) await dropAndReconnect(page);
    await received(page);
  },

  /** A Khözör seat sets a team signal, then makes a move. A signal is only true for
   * some hands (the table refuses a false one): the seat plays on, clicking, until
   * its view lists one, and a false one clicked before is explained in Italian. */
  async khozor(page) {
    await logIn(page, args.player, "it");
    await openPrivate(page, "khozor");
    await page.waitForSelector("#signals:not([hidden])", { timeout: STEP_MS });
    const legal = () => page.locator('#signals button[data-legal="true"][aria-pressed="false"]');
    // legality is read on the seat's turn only: the table waits for it then, so its hand
    // (what makes a signal true) holds still; between turns the reserve refills hands
    // and a signal seen true may be gone before it is pressed
    let moves = 0;
    for (; ; moves += 1) {
      if (moves > 60 || !(await awaitTurn(page))) throw new Error(`no true signal in ${moves} moves`);
      if (await legal().count()) break;
      if (!out.falseSignal) {
        await page.click("#signal-three");
        await page.waitForSelector('#status[data-kind="error"]', { timeout: STEP_MS });
        out.falseSignal = await status(page);
        await shot(page, "khozor-false-signal");
      }
      await clickMove(page);
    }
    const button = legal().first();
    out.signal = await button.getAttribute("id");
    await button.focus(); // by keyboard, as a person without a mouse would
    await page.keyboard.press("Space");
    await page.waitForSelector(`#${out.signal}[aria-pressed="true"]`, { timeout: STEP_MS });
    out.signalStatus = await status(page);
    out.teamSignals = await page.locator("#team-signals li").allTextContents();
    note(`signal ${out.signal} set after ${moves} moves`);
    await shot(page, "khozor-signal");
    if (await awaitTurn(page)) {
      out.turnBefore = await table(page);
      out.moves = await page.locator("#moves button").allTextContents();
      out.move = await clickMove(page);
      out.turnAfter = await table(page);
      note(`moved: ${out.move}`);
      await shot(page, "khozor-move");
    }
    await received(page);
  },
};

const browser = await chromium.launch({
  executablePath: args.chromium ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
out.consoleErrors = [];
page.on("pageerror", (error) => out.consoleErrors.push(String(error)));
page.on("console", (message) => {
  if (message.type() === "error") out.consoleErrors.push(message.text());
});
let code = 0;
try {
  await scenarios[scenario](page);
} catch (error) {
  code = 1;
  out.error = String(error?.stack ?? error);
  console.error(out.error);
  try {
    await shot(page, "failure");
    out.failureTable = await table(page);
    out.failureStatus = await status(page);
    await received(page);
  } catch {
    // the page is gone: nothing more to show
  }
} finally {
  out.seconds = (Date.now() - started) / 1000;
  writeFileSync(outPath, JSON.stringify(out));
  await browser.close();
}
process.exit(code);
