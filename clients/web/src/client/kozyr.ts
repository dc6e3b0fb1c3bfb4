/**
 * One object for every client-facing kozyr service over gRPC-Web, acting with one
 * token: what `kozyr.client.channel.ServiceClient` gives Python callers.
 *
 * - `authorization: Bearer <token>` on every call (a function is asked at every call,
 *   so a page can log in again without rebuilding the clients);
 * - `accept-language`: the language the server lists first in its error details;
 * - `x-request-id`: a correlation id per call, kept across its retries (a write's own
 *   `request_id` field is what makes it idempotent; the caller chooses it);
 * - unary calls refused with UNAVAILABLE / RESOURCE_EXHAUSTED sent again with backoff
 *   (`retry.ts`); streams are not retried here: `watchTable` resumes them.
 * - `observe`: every message received and every error, as they arrive (a page's own
 *   log; the browser tests hand it to the leak checker).
 */
import type { DescMessage, DescService, MessageShape } from "@bufbuild/protobuf";
import {
  createClient,
  type CallOptions,
  type Client,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { BotsService } from "../gen/kozyr/bots/v1/bots_service_pb.js";
import { ClockService } from "../gen/kozyr/clock/v1/clock_service_pb.js";
import { MatchmakingService } from "../gen/kozyr/matchmaking/v1/matchmaking_service_pb.js";
import { TableService } from "../gen/kozyr/table/v1/table_service_pb.js";
import { newRequestId } from "./ids.js";
import { DEFAULT_RETRY, withRetries, type RetryPolicy } from "./retry.js";

export const AUTHORIZATION_HEADER = "authorization";
export const LANGUAGE_HEADER = "accept-language";
export const REQUEST_ID_HEADER = "x-request-id";

/** One thing received by a call: a message, or the error that ended the call. */
export type Received =
  | { method: string; message: MessageShape<DescMessage>; schema: DescMessage }
  | { method: string; error: unknown };

export interface KozyrOptions {
  /** The gRPC-Web edge, e.g. "http://127.0.0.1:8090" (every service on one origin). */
  baseUrl?: string;
  /** Instead of `baseUrl`: a transport of the caller's (Node's gRPC …), which must add
   * its own metadata: `token`, `language` and `observe` then go unused (the retries
   * still apply). */
  transport?: Transport;
  /** The bearer token, or a function asked at every call; none: anonymous calls. */
  token?: string | (() => string | undefined);
  /** "en", "ro" or "it": the language listed first in error details. */
  language?: string | (() => string | undefined);
  /** Retries of unary calls; false: none (tests of the raw answers). */
  retry?: RetryPolicy | false;
  /** Another fetch (Node's, a test's). */
  fetch?: typeof globalThis.fetch;
  /** Told every message and error received. */
  observe?: (received: Received) => void;
}

export interface Kozyr {
  table: Client<typeof TableService>;
  matchmaking: Client<typeof MatchmakingService>;
  bots: Client<typeof BotsService>;
  clock: Client<typeof ClockService>;
  transport: Transport;
}

function valueOf(given: string | (() => string | undefined) | undefined): string | undefined {
  return typeof given === "function" ? given() : given;
}

/** The interceptor that puts token, language and a request id on every call. */
export function metadataInterceptor(options: KozyrOptions): Interceptor {
  return (next) => async (request) => {
    const token = valueOf(options.token);
    const language = valueOf(options.language);
    if (token) {
      request.header.set(AUTHORIZATION_HEADER, `Bearer ${token}`);
    }
    if (language) {
      request.header.set(LANGUAGE_HEADER, language);
    }
    if (!request.header.has(REQUEST_ID_HEADER)) {
      request.header.set(REQUEST_ID_HEADER, newRequestId());
    }
    return next(request);
  };
}

/** The interceptor that tells `observe` every message and error received. */
export function observingInterceptor(observe: (received: Received) => void): Interceptor {
  return (next) => async (request) => {
    const method = `${request.service.typeName}/${request.method.name}`;
    const schema = request.method.output;
    try {
      const response = await next(request);
      if (!response.stream) {
        observe({ method, message: response.message, schema });
        return response;
      }
      const source = response.message;
      async function* relayed(): AsyncGenerator<MessageShape<DescMessage>> {
        try {
          for await (const message of source) {
            observe({ method, message, schema });
            yield message;
          }
        } catch (error) {
          observe({ method, error });
          throw error;
        }
      }
      return { ...response, message: relayed() } as typeof response;
    } catch (error) {
      observe({ method, error });
      throw error;
    }
  };
}

/** `client` with every unary method retried by `policy`, one request id per call. */
export function retrying<S extends DescService>(
  service: S,
  client: Client<S>,
  policy: RetryPolicy | false,
): Client<S> {
  if (policy === false) {
    return client;
  }
  const methods = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  const wrapped: Record<string, unknown> = { ...methods };
  for (const method of service.methods) {
    if (method.methodKind !== "unary") {
      continue;
    }
    const original = methods[method.localName]!;
    wrapped[method.localName] = (request: unknown, options: CallOptions = {}) => {
      const headers = new Headers(options.headers);
      if (!headers.has(REQUEST_ID_HEADER)) {
        headers.set(REQUEST_ID_HEADER, newRequestId());
      }
      const call = (): Promise<unknown> =>
        original(request, { ...options, headers }) as Promise<unknown>;
      return withRetries(call, policy, options.signal);
    };
  }
  return wrapped as unknown as Client<S>;
}

/** The gRPC-Web transport to `baseUrl` with kozyr's metadata (and observer). */
export function createKozyrTransport(options: KozyrOptions): Transport {
  if (options.transport) {
    return options.transport;
  }
  if (!options.baseUrl) {
    throw new Error("kozyr: give baseUrl (the gRPC-Web edge) or a transport");
  }
  const interceptors = [metadataInterceptor(options)];
  if (options.observe) {
    interceptors.push(observingInterceptor(options.observe));
  }
  return createGrpcWebTransport({
    baseUrl: options.baseUrl,
    useBinaryFormat: true,
    interceptors,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** Clients of the table, matchmaking, bots and clock services over one transport. */
export function createKozyr(options: KozyrOptions): Kozyr {
  const transport = createKozyrTransport(options);
  const policy = options.retry ?? DEFAULT_RETRY;
  return {
    table: retrying(TableService, createClient(TableService, transport), policy),
    matchmaking: retrying(MatchmakingService, createClient(MatchmakingService, transport), policy),
    bots: retrying(BotsService, createClient(BotsService, transport), policy),
    clock: retrying(ClockService, createClient(ClockService, transport), policy),
    transport,
  };
}
