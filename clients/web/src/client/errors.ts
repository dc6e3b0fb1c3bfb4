/**
 * What a failed call says, read the way the Python client reads it
 * (`kozyr.runtime.errors.error_details`): the status code, and the AIP-193 details the
 * server packs into `grpc-status-details-bin` — one `google.rpc.ErrorInfo` (reason,
 * domain, metadata) and one `google.rpc.LocalizedMessage` per language, the caller's
 * `accept-language` first. A page shows `errorText`: the player's language, else the
 * first language sent, else the status message.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, LocalizedMessageSchema } from "../gen/google/rpc/error_details_pb.js";

export interface ErrorDetails {
  code: Code;
  /** The gRPC name of the code, e.g. "FAILED_PRECONDITION". */
  codeName: string;
  /** The status message (English, for logs). */
  message: string;
  reason?: string;
  domain?: string;
  metadata: Record<string, string>;
  /** Localised texts by locale, in the order the server sent them (caller's first). */
  messages: Record<string, string>;
}

/** Code → the gRPC spelling the server's docs use ("NOT_FOUND", "UNAVAILABLE" …). */
export function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** The details of any error a call threw (a non-Connect error counts as UNKNOWN). */
export function errorDetails(error: unknown): ErrorDetails {
  const err = ConnectError.from(error);
  const info = err.findDetails(ErrorInfoSchema)[0];
  const messages: Record<string, string> = {};
  for (const localized of err.findDetails(LocalizedMessageSchema)) {
    messages[localized.locale] = localized.message;
  }
  return {
    code: err.code,
    codeName: codeName(err.code),
    message: err.rawMessage,
    reason: info?.reason || undefined,
    domain: info?.domain || undefined,
    metadata: info ? { ...info.metadata } : {},
    messages,
  };
}

/** The server's explanation in `language` (else the first it sent, else its status
 * message, else the code's name): what a player is shown. */
export function errorText(error: unknown, language: string): string {
  const details = errorDetails(error);
  const texts = Object.values(details.messages);
  return details.messages[language] ?? texts[0] ?? (details.message || details.codeName);
}

/** The ErrorInfo reason of a failed call, undefined when the server sent none. */
export function errorReason(error: unknown): string | undefined {
  return errorDetails(error).reason;
}
