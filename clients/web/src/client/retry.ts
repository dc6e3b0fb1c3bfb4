/**
 * Retries of the answers that mean "not now", as the Python client's gRPC service
 * config does (`kozyr.client.channel.retry_service_config`): UNAVAILABLE and
 * RESOURCE_EXHAUSTED, five attempts at most, a random pause up to the backoff (0.2 s,
 * 0.5 s, 1.25 s, 3 s) before each new one so a burst refused at once comes back
 * spread out. A refusal carrying the server's pushback (ErrorInfo `retryAfterSeconds`,
 * e.g. TOO_MANY_HINTS) is not retried: the caller is told when to come back.
 * Every write of kozyr's APIs carries a request id, so sending it again is safe.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { errorDetails } from "./errors.js";

export interface RetryPolicy {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  multiplier: number;
  codes: readonly Code[];
  /** Random source in [0, 1) for the jitter (tests pass a fixed one). */
  random?: () => number;
  /** How to wait (tests may shorten it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const RETRYABLE_CODES: readonly Code[] = [Code.Unavailable, Code.ResourceExhausted];

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  initialBackoffMs: 200,
  maxBackoffMs: 3000,
  multiplier: 2.5,
  codes: RETRYABLE_CODES,
};

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The upper bound of the pause before attempt `attempt + 1` (attempt 1 is the first). */
export function backoffCeilingMs(policy: RetryPolicy, attempt: number): number {
  const grown = policy.initialBackoffMs * policy.multiplier ** (attempt - 1);
  return Math.min(policy.maxBackoffMs, grown);
}

/** Whether `error` may be answered by sending the same request again. */
export function isRetryable(error: unknown, policy: RetryPolicy): boolean {
  if (!(error instanceof ConnectError) || !policy.codes.includes(error.code)) {
    return false;
  }
  return errorDetails(error).metadata["retryAfterSeconds"] === undefined;
}

/** Run `call` until it answers, fails for good, or `policy.maxAttempts` are spent. */
export async function withRetries<T>(
  call: () => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  const random = policy.random ?? Math.random;
  const wait = policy.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= policy.maxAttempts || !isRetryable(error, policy) || signal?.aborted) {
        throw error;
      }
      await wait(random() * backoffCeilingMs(policy, attempt), signal);
    }
  }
}
