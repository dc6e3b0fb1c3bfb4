/** The thin layer over the generated clients, against a gRPC-Web server on a socket:
 * metadata, retries, error details, the resuming watch, a seat's session. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import {
  backoffCeilingMs,
  createKozyr,
  DEFAULT_RETRY,
  errorDetails,
  errorText,
  TableSession,
  watchTable,
  type Received,
  type RetryPolicy,
  type SessionEvent,
} from "../src/client/index.js";
import { BotsService } from "../src/gen/kozyr/bots/v1/bots_service_pb.js";
import { ActionSchema } from "../src/gen/kozyr/table/v1/actions_pb.js";
import { TableService } from "../src/gen/kozyr/table/v1/table_service_pb.js";
import { TableViewSchema, type TableView } from "../src/gen/kozyr/table/v1/views_pb.js";
import { kozyrError, serve, type TestServer } from "./server.js";

const FAST: RetryPolicy = { ...DEFAULT_RETRY, sleep: async () => undefined };
const servers: TestServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function view(version: number, extra: MessageInitShape<typeof TableViewSchema> = {}): TableView {
  return create(TableViewSchema, { tableId: "t1", version: BigInt(version), seat: 0, ...extra });
}

function playCard(code: string) {
  return create(ActionSchema, {
    action: { case: "playCard", value: { card: { code } } },
  });
}

const NOT_YOUR_TURN = {
  ro: "Nu este rândul tău.",
  en: "It is not your turn.",
  it: "Non è il tuo turno.",
};

describe("metadata", () => {
  test("token, language and a request id reach the service on every call", async () => {
    const seen: Headers[] = [];
    const server = await serve(TableService, {
      getTable(_request, context) {
        seen.push(context.requestHeader);
        return { view: view(1) };
      },
    });
    servers.push(server);
    let token = "first-token";
    const kozyr = createKozyr({ baseUrl: server.baseUrl, token: () => token, language: "ro" });
    await kozyr.table.getTable({ tableId: "t1" });
    token = "second-token";
    await kozyr.table.getTable({ tableId: "t1" });
    assert.equal(seen[0]!.get("authorization"), "Bearer first-token");
    assert.equal(seen[1]!.get("authorization"), "Bearer second-token");
    assert.equal(seen[0]!.get("accept-language"), "ro");
    const ids = seen.map((h) => h.get("x-request-id"));
    assert.match(ids[0]!, /^[0-9a-f]{32}$/);
    assert.notEqual(ids[0], ids[1]);
  });

  test("no token: no authorization header", async () => {
    const seen: Headers[] = [];
    const server = await serve(TableService, {
      getTable(_request, context) {
        seen.push(context.requestHeader);
        return { view: view(1) };
      },
    });
    servers.push(server);
    await createKozyr({ baseUrl: server.baseUrl }).table.getTable({ tableId: "t1" });
    assert.equal(seen[0]!.get("authorization"), null);
  });
});

describe("observing", () => {
  test("every message of a call or a stream, and every error, is told as it arrives", async () => {
    const server = await serve(TableService, {
      getTable: () => ({ view: view(1) }),
      async *watchTable() {
        yield { view: view(2) };
        yield { view: view(3) };
        throw kozyrError(Code.FailedPrecondition, "TABLE_GONE", { en: "Gone." });
      },
    });
    servers.push(server);
    const told: Received[] = [];
    const kozyr = createKozyr({ baseUrl: server.baseUrl, observe: (r) => told.push(r) });
    await kozyr.table.getTable({ tableId: "t1" });
    await assert.rejects(async () => {
      for await (const _ of kozyr.table.watchTable({ tableId: "t1" })) {
        // each answer is told before the caller sees it
      }
    });
    const versions = told.map((r) => ("message" in r ? (r.message as { view?: TableView }).view?.version : "error"));
    assert.deepEqual(versions, [1n, 2n, 3n, "error"]);
    assert.equal(told[0]!.method, "kozyr.table.v1.TableService/GetTable");
    assert.equal(told[3]!.method, "kozyr.table.v1.TableService/WatchTable");
    assert.equal("error" in told[3]! && errorDetails(told[3].error).reason, "TABLE_GONE");
  });
});

describe("retries", () => {
  test("UNAVAILABLE is sent again, with the same request and request id", async () => {
    const calls: { requestId: string; header: string | null }[] = [];
    const server = await serve(TableService, {
      submitAction(request, context) {
        calls.push({ requestId: request.requestId, header: context.requestHeader.get("x-request-id") });
        if (calls.length < 3) throw new ConnectError("restarting", Code.Unavailable);
        return { view: view(2) };
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl, retry: FAST });
    const answer = await kozyr.table.submitAction({ tableId: "t1", requestId: "r-1", action: playCard("AS") });
    assert.equal(answer.view?.version, 2n);
    assert.equal(calls.length, 3);
    assert.deepEqual(new Set(calls.map((c) => c.requestId)), new Set(["r-1"]));
    assert.equal(new Set(calls.map((c) => c.header)).size, 1);
  });

  test("five attempts at most, then the error", async () => {
    let calls = 0;
    const server = await serve(TableService, {
      getTable() {
        calls += 1;
        throw new ConnectError("overloaded", Code.ResourceExhausted);
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl, retry: FAST });
    await assert.rejects(kozyr.table.getTable({ tableId: "t1" }), (e: unknown) => {
      return ConnectError.from(e).code === Code.ResourceExhausted;
    });
    assert.equal(calls, 5);
  });

  test("a refusal, or the server's pushback, is not retried", async () => {
    let hints = 0;
    let moves = 0;
    const server = await serve(
      TableService,
      {
        submitAction() {
          moves += 1;
          throw kozyrError(Code.FailedPrecondition, "NOT_YOUR_TURN", NOT_YOUR_TURN);
        },
      },
      (router) =>
        router.service(BotsService, {
          suggestAction() {
            hints += 1;
            throw kozyrError(Code.ResourceExhausted, "TOO_MANY_HINTS", { en: "Slow down." }, {
              retryAfterSeconds: "3",
            });
          },
        }),
    );
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl, retry: FAST });
    await assert.rejects(kozyr.bots.suggestAction({ tableId: "t1" }));
    await assert.rejects(kozyr.table.submitAction({ tableId: "t1", requestId: "r" }));
    assert.equal(hints, 1);
    assert.equal(moves, 1);
  });

  test("the pauses grow 0.2, 0.5, 1.25, 3 s and stay at 3 s; jitter below them", async () => {
    const ceilings = [1, 2, 3, 4, 5].map((a) => backoffCeilingMs(DEFAULT_RETRY, a));
    assert.deepEqual(ceilings, [200, 500, 1250, 3000, 3000]);
    const waited: number[] = [];
    const policy: RetryPolicy = {
      ...DEFAULT_RETRY,
      random: () => 0.5,
      sleep: async (ms) => {
        waited.push(ms);
      },
    };
    const server = await serve(TableService, {
      getTable() {
        throw new ConnectError("down", Code.Unavailable);
      },
    });
    servers.push(server);
    await assert.rejects(createKozyr({ baseUrl: server.baseUrl, retry: policy }).table.getTable({}));
    assert.deepEqual(waited, [100, 250, 625, 1500]);
  });
});

describe("error details", () => {
  test("the localized message in the caller's language, reason and metadata", async () => {
    const server = await serve(TableService, {
      submitAction() {
        throw kozyrError(Code.FailedPrecondition, "NOT_YOUR_TURN", NOT_YOUR_TURN, { seat: "1" });
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl, language: "ro", retry: false });
    const error = await kozyr.table.submitAction({ tableId: "t1" }).catch((e: unknown) => e);
    const details = errorDetails(error);
    assert.equal(details.code, Code.FailedPrecondition);
    assert.equal(details.codeName, "FAILED_PRECONDITION");
    assert.equal(details.reason, "NOT_YOUR_TURN");
    assert.equal(details.domain, "kozyr");
    assert.deepEqual(details.metadata, { seat: "1" });
    assert.deepEqual(Object.keys(details.messages), ["ro", "en", "it"]);
    assert.equal(errorText(error, "ro"), "Nu este rândul tău.");
    assert.equal(errorText(error, "it"), "Non è il tuo turno.");
    assert.equal(errorText(error, "de"), "Nu este rândul tău."); // the first sent
  });

  test("without details: the status message, else the code's name", async () => {
    const server = await serve(TableService, {
      getTable() {
        throw new ConnectError("no such table", Code.NotFound);
      },
    });
    servers.push(server);
    const error = await createKozyr({ baseUrl: server.baseUrl })
      .table.getTable({})
      .catch((e: unknown) => e);
    assert.equal(errorText(error, "en"), "no such table");
    assert.equal(errorDetails(error).reason, undefined);
    assert.equal(errorText(new ConnectError("", Code.Aborted), "en"), "ABORTED");
  });
});

describe("watch", () => {
  test("resumes from the last version after a drop; views only go forward", async () => {
    const fromVersions: bigint[] = [];
    let connections = 0;
    const server = await serve(TableService, {
      getTable() {
        return { view: view(connections === 0 ? 1 : 3) };
      },
      async *watchTable(request) {
        fromVersions.push(request.fromVersion);
        connections += 1;
        if (connections === 1) {
          yield { view: view(2) };
          yield { view: view(3) };
          throw new ConnectError("table service restarting", Code.Unavailable);
        }
        yield { view: view(3) }; // already given: dropped
        yield { view: view(4, { finished: true }) };
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl });
    const states: string[] = [];
    const versions: bigint[] = [];
    for await (const v of watchTable(kozyr, "t1", {
      backoffMs: [1],
      onState: (s) => states.push(s.kind),
    })) {
      versions.push(v.version);
    }
    assert.deepEqual(versions, [1n, 2n, 3n, 4n]);
    assert.deepEqual(fromVersions, [1n, 3n]);
    assert.deepEqual(states, ["connected", "reconnecting", "connected"]);
  });

  test("a refusal ends the watch with its error", async () => {
    const server = await serve(TableService, {
      getTable() {
        throw kozyrError(Code.NotFound, "TABLE_NOT_FOUND", { en: "No such table." });
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl });
    await assert.rejects(
      (async () => {
        for await (const _ of watchTable(kozyr, "t1", { backoffMs: [1] })) {
          // nothing comes
        }
      })(),
      (e: unknown) => errorDetails(e).reason === "TABLE_NOT_FOUND",
    );
  });

  test("an abort ends it quietly", async () => {
    const server = await serve(TableService, {
      getTable: () => ({ view: view(1) }),
      async *watchTable() {
        yield { view: view(2) };
        await new Promise(() => undefined); // silent until cut
      },
    });
    servers.push(server);
    const stop = new AbortController();
    const versions: bigint[] = [];
    for await (const v of watchTable(createKozyr({ baseUrl: server.baseUrl }), "t1", {
      signal: stop.signal,
    })) {
      versions.push(v.version);
      if (v.version === 2n) stop.abort();
    }
    assert.deepEqual(versions, [1n, 2n]);
  });
});

describe("session", () => {
  test("a refused move is reported in the player's language and not kept", async () => {
    const server = await serve(TableService, {
      submitAction() {
        throw kozyrError(Code.FailedPrecondition, "NOT_YOUR_TURN", NOT_YOUR_TURN);
      },
    });
    servers.push(server);
    const events: SessionEvent[] = [];
    const kozyr = createKozyr({ baseUrl: server.baseUrl, language: "ro" });
    const session = new TableSession(kozyr, "t1", {
      language: () => "ro",
      onView: () => undefined,
      onEvent: (e) => events.push(e),
      heartbeats: false,
    });
    session.accept(view(5));
    assert.equal(await session.submit(playCard("AS")), false);
    assert.deepEqual(events, [{ kind: "refused", text: "Nu este rândul tău.", reason: "NOT_YOUR_TURN" }]);
    assert.equal(session.pending, undefined);
  });

  test("a move lost to the network is sent again with its request id once the table answers", async () => {
    const requestIds: string[] = [];
    const expected: (bigint | undefined)[] = [];
    let up = false;
    let shown: (v: TableView) => void = () => undefined;
    const server = await serve(TableService, {
      getTable() {
        up = true;
        return { view: view(5) };
      },
      submitAction(request) {
        requestIds.push(request.requestId);
        expected.push(request.expectedVersion);
        if (!up) throw new ConnectError("down", Code.Unavailable);
        return { view: view(6), duplicate: false };
      },
      async *watchTable() {
        await new Promise(() => undefined);
      },
    });
    servers.push(server);
    const kozyr = createKozyr({ baseUrl: server.baseUrl, retry: false });
    const session = new TableSession(kozyr, "t1", {
      language: () => "en",
      onView: (v) => shown(v),
      onEvent: () => undefined,
      heartbeats: false,
    });
    session.accept(view(5));
    assert.equal(await session.submit(playCard("AS")), false);
    assert.ok(session.pending, "kept for later");
    const resent = new Promise<void>((resolve) => (shown = (v) => v.version === 6n && resolve()));
    void session.run();
    await resent;
    session.close();
    assert.equal(requestIds.length, 2);
    assert.equal(requestIds[0], requestIds[1]);
    assert.deepEqual(expected, [5n, 5n]);
    assert.equal(session.view?.version, 6n);
    assert.equal(session.pending, undefined);
  });

  test("a signal carries no expected version", async () => {
    const expected: (bigint | undefined)[] = [];
    const server = await serve(TableService, {
      submitAction(request) {
        expected.push(request.expectedVersion);
        return { view: view(9) };
      },
    });
    servers.push(server);
    const session = new TableSession(createKozyr({ baseUrl: server.baseUrl }), "t1", {
      language: () => "en",
      onView: () => undefined,
      onEvent: () => undefined,
      heartbeats: false,
    });
    session.accept(view(5));
    const signal = create(ActionSchema, { action: { case: "toggleSignal", value: { signal: 1 } } });
    assert.equal(await session.submit(signal), true);
    assert.deepEqual(expected, [undefined]);
  });
});
