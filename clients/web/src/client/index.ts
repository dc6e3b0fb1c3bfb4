/** kozyr's TypeScript client: the generated messages and services (../gen) and a thin
 * layer over gRPC-Web — token, language, request ids, retries, a resuming watch, error
 * details, a seat's session. README.md beside package.json tells how to use it. */
export * from "./errors.js";
export * from "./ids.js";
export * from "./kozyr.js";
export * from "./retry.js";
export * from "./session.js";
export * from "./watch.js";
