/**
 * A table's views for ever, across drops — what `kozyr play`'s session does
 * (docs/play.md, "Connection"): each connection first reads the table (`GetTable`
 * answers at once, where the stream says nothing until something changes), then follows
 * `WatchTable` from the version read. Views only go forward: one no newer than the last
 * given is dropped. A drop (UNAVAILABLE, a cut connection, a call that took too long …)
 * is followed by a pause of 0.5, 1, 2, 4, then every 8 s, and a new connection; any
 * other error (NOT_FOUND, PERMISSION_DENIED …) ends the watch. The watch ends with the
 * game (a finished view) or when `signal` aborts.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { TableView } from "../gen/kozyr/table/v1/views_pb.js";
import { errorDetails } from "./errors.js";
import type { Kozyr } from "./kozyr.js";
import { sleep } from "./retry.js";

export const BACKOFF_MS: readonly number[] = [500, 1000, 2000, 4000, 8000];
/** A call that takes longer counts as lost to the network. */
export const CALL_TIMEOUT_MS = 10_000;

export const NETWORK_CODES: readonly Code[] = [
  Code.Unavailable,
  Code.DeadlineExceeded,
  Code.ResourceExhausted,
  Code.Canceled,
  Code.Unknown,
  Code.Internal, // a gRPC-Web body cut mid-message (a proxy or server gone) reads as this
];
/** Refusals that look like the network but are the server's answer to this caller. */
const OWN_LIMITS = new Set(["TOO_MANY_SIGNALS", "TOO_MANY_HINTS"]);

/** Whether `error` says nothing about the call itself: the network, not a refusal. */
export function isNetworkError(error: unknown): boolean {
  const err = ConnectError.from(error);
  if (!NETWORK_CODES.includes(err.code)) {
    return false;
  }
  const reason = errorDetails(err).reason;
  return reason === undefined || !OWN_LIMITS.has(reason);
}

export type WatchState =
  | { kind: "connected"; afterFailures: number }
  | { kind: "reconnecting"; pauseMs: number; error: unknown };

export interface WatchOptions {
  /** The last version the caller has (views up to it are not given again). */
  fromVersion?: bigint;
  signal?: AbortSignal;
  backoffMs?: readonly number[];
  onState?: (state: WatchState) => void;
}

/** Every newer view of `tableId`, resuming after each drop from the last one given. */
export async function* watchTable(
  kozyr: Kozyr,
  tableId: string,
  options: WatchOptions = {},
): AsyncGenerator<TableView> {
  const backoff = options.backoffMs ?? BACKOFF_MS;
  let last = options.fromVersion ?? 0n;
  let failures = 0;
  while (!options.signal?.aborted) {
    let dropped: unknown = undefined;
    try {
      const got = await kozyr.table.getTable(
        { tableId },
        { signal: options.signal, timeoutMs: CALL_TIMEOUT_MS },
      );
      options.onState?.({ kind: "connected", afterFailures: failures });
      failures = 0;
      const read = got.view;
      if (read && read.version > last) {
        last = read.version;
        yield read;
        if (read.finished) return;
      }
      const stream = kozyr.table.watchTable(
        { tableId, fromVersion: last },
        { signal: options.signal },
      );
      for await (const response of stream) {
        const view = response.view;
        if (view && view.version > last) {
          last = view.version;
          yield view;
          if (view.finished) return;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      if (!isNetworkError(error)) throw error;
      dropped = error;
    }
    // a stream the server ended is a drop too: connect again, after the same pause
    const pauseMs = backoff[Math.min(failures, backoff.length - 1)]!;
    failures += 1;
    options.onState?.({ kind: "reconnecting", pauseMs, error: dropped });
    try {
      await sleep(pauseMs, options.signal);
    } catch {
      return;
    }
  }
}
