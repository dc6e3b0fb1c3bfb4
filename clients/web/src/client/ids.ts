/** Ids a client makes up: request ids (a write's idempotency key and the call's
 * correlation id) and client seeds (docs/fair-deal.md §9), both from the platform's
 * CSPRNG (`crypto.getRandomValues` works on plain-http pages too, `randomUUID` not). */

/** `bytes` random bytes as lowercase hex. */
export function randomHex(bytes: number): string {
  const buffer = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buffer);
  return Array.from(buffer, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh request id: 32 hex digits, like the Python client's `uuid4().hex`. */
export function newRequestId(): string {
  return randomHex(16);
}

/** A client seed nobody can guess: 32 hex digits. */
export function randomClientSeed(): string {
  return randomHex(16);
}
