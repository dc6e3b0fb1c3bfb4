/**
 * One seat at one table: the watch, moves, hints, heartbeats and client seeds — a port
 * of `kozyr play`'s session (libs/kozyr/cli/play/session.py, docs/play.md "Connection").
 *
 * Views only go forward, whichever way they came (the stream or a move's answer). A move
 * whose answer was lost to the network stays pending and is sent again, with the same
 * request id, as soon as the table answers again: the table applies it once and answers
 * a repeat as a duplicate. A move the table refuses is dropped and its reason reported in
 * the player's language. A move refused as STALE_VERSION is sent once more on the fresh
 * version when the table still waits for this seat in the same turn (what changed was a
 * presence or a seat's control). Signals carry no version.
 */
import { create } from "@bufbuild/protobuf";
import { type Action } from "../gen/kozyr/table/v1/actions_pb.js";
import type { TableView } from "../gen/kozyr/table/v1/views_pb.js";
import { errorDetails, errorText } from "./errors.js";
import { newRequestId, randomClientSeed } from "./ids.js";
import type { Kozyr } from "./kozyr.js";
import { sleep } from "./retry.js";
import { CALL_TIMEOUT_MS, isNetworkError, watchTable, type WatchState } from "./watch.js";
import { SubmitActionRequestSchema } from "../gen/kozyr/table/v1/table_service_pb.js";

export type SessionEvent =
  | { kind: "reconnecting"; seconds: number }
  | { kind: "reconnected" }
  | { kind: "refused"; text: string; reason?: string }
  | { kind: "lost" }
  | { kind: "ended"; text: string };

interface Pending {
  requestId: string;
  action: Action;
  expectedVersion?: bigint;
  turn: bigint;
}

export interface SessionOptions {
  language: () => string;
  onView: (view: TableView) => void;
  onEvent: (event: SessionEvent) => void;
  backoffMs?: readonly number[];
  /** The player's own client seed for every deal (else a random one per deal). */
  clientSeed?: string;
  /** Heartbeats to the clock service (default true). */
  heartbeats?: boolean;
}

export class TableSession {
  view: TableView | undefined;
  pending: Pending | undefined;
  connected = false;
  private readonly seeded = new Set<number>();
  private readonly stop = new AbortController();

  constructor(
    readonly kozyr: Kozyr,
    readonly tableId: string,
    private readonly options: SessionOptions,
  ) {}

  get version(): bigint {
    return this.view?.version ?? 0n;
  }

  /** Show `view` if it is newer than the one shown. */
  accept(view: TableView | undefined): boolean {
    if (!view || (this.view && view.version <= this.view.version)) {
      return false;
    }
    this.view = view;
    this.options.onView(view);
    this.contribute(view);
    return true;
  }

  /** Watch until `close()`, resuming after every drop; heartbeats beside. */
  async run(): Promise<void> {
    if (this.options.heartbeats !== false) {
      void this.heartbeats();
    }
    const onState = (state: WatchState): void => {
      if (state.kind === "connected") {
        this.connected = true;
        if (state.afterFailures > 0) this.options.onEvent({ kind: "reconnected" });
        void this.resend();
      } else {
        this.connected = false;
        this.options.onEvent({ kind: "reconnecting", seconds: state.pauseMs / 1000 });
      }
    };
    try {
      for await (const view of watchTable(this.kozyr, this.tableId, {
        fromVersion: this.version,
        signal: this.stop.signal,
        onState,
        ...(this.options.backoffMs ? { backoffMs: this.options.backoffMs } : {}),
      })) {
        this.accept(view);
      }
    } catch (error) {
      this.options.onEvent({ kind: "ended", text: errorText(error, this.options.language()) });
    }
  }

  close(): void {
    this.stop.abort();
  }

  /** Send a move chosen on the view shown; true once the table took it. */
  async submit(action: Action): Promise<boolean> {
    const signal = action.action.case === "toggleSignal";
    const pending: Pending = {
      requestId: newRequestId(),
      action,
      turn: this.view?.turn?.number ?? 0n,
      ...(signal || !this.view ? {} : { expectedVersion: this.view.version }),
    };
    this.pending = pending;
    return this.send(pending, true);
  }

  private async resend(): Promise<void> {
    if (this.pending) await this.send(this.pending, true);
  }

  private async send(pending: Pending, staleAgain: boolean): Promise<boolean> {
    const request = create(SubmitActionRequestSchema, {
      tableId: this.tableId,
      requestId: pending.requestId,
      action: pending.action,
      ...(pending.expectedVersion === undefined ? {} : { expectedVersion: pending.expectedVersion }),
    });
    try {
      const answer = await this.kozyr.table.submitAction(request, { timeoutMs: CALL_TIMEOUT_MS });
      if (this.pending === pending) this.pending = undefined;
      this.accept(answer.view);
      return true;
    } catch (error) {
      if (isNetworkError(error)) {
        this.options.onEvent({ kind: "lost" }); // kept: sent again on reconnecting
        return false;
      }
      if (this.pending === pending) this.pending = undefined;
      const reason = errorDetails(error).reason;
      if (reason === "STALE_VERSION" && staleAgain && (await this.sameTurn(pending))) {
        const again: Pending = { ...pending, requestId: newRequestId(), expectedVersion: this.version };
        this.pending = again;
        return this.send(again, false);
      }
      this.options.onEvent({
        kind: "refused",
        text: errorText(error, this.options.language()),
        ...(reason ? { reason } : {}),
      });
      return false;
    }
  }

  /** After STALE_VERSION: whether the table, read again, still waits for this seat in
   * the same turn (something the move does not depend on changed). */
  private async sameTurn(pending: Pending): Promise<boolean> {
    try {
      const got = await this.kozyr.table.getTable({ tableId: this.tableId }, { timeoutMs: CALL_TIMEOUT_MS });
      this.accept(got.view);
    } catch {
      return false;
    }
    const view = this.view;
    return (
      view !== undefined &&
      pending.expectedVersion !== undefined &&
      view.version > pending.expectedVersion &&
      view.turn?.number === pending.turn &&
      view.seat !== undefined &&
      (view.turn?.seats ?? []).includes(view.seat)
    );
  }

  /** The bots service's suggestion for this seat, or undefined (the reason reported). */
  async hint(): Promise<Action | undefined> {
    try {
      const answer = await this.kozyr.bots.suggestAction(
        { tableId: this.tableId },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      return answer.action;
    } catch (error) {
      const text = errorText(error, this.options.language());
      const reason = errorDetails(error).reason;
      this.options.onEvent({ kind: "refused", text, ...(reason ? { reason } : {}) });
      return undefined;
    }
  }

  /** Set the seat's client seed for the next deal once, when the view offers one. A
   * refused or lost seed leaves the deal with the seat's default: not retried. */
  private contribute(view: TableView): void {
    const deal = view.nextDeal?.number;
    if (deal === undefined || deal === 0 || view.seat === undefined || this.seeded.has(deal)) {
      return;
    }
    this.seeded.add(deal);
    this.kozyr.table
      .setClientSeed(
        {
          tableId: this.tableId,
          requestId: newRequestId(),
          dealNumber: deal,
          clientSeed: this.options.clientSeed ?? randomClientSeed(),
        },
        { timeoutMs: CALL_TIMEOUT_MS },
      )
      .catch(() => undefined);
  }

  /** Tell the clock service the player is here, at the interval it asks for. */
  private async heartbeats(): Promise<void> {
    while (!this.stop.signal.aborted) {
      let intervalMs = 10_000;
      try {
        const answer = await this.kozyr.clock.heartbeat({}, { timeoutMs: CALL_TIMEOUT_MS });
        if (answer.interval) {
          const seconds = Number(answer.interval.seconds) + answer.interval.nanos / 1e9;
          intervalMs = Math.max(1000, seconds * 1000);
        }
      } catch {
        // the clock may be away: the next beat tries again
      }
      try {
        await sleep(intervalMs, this.stop.signal);
      } catch {
        return;
      }
    }
  }
}
