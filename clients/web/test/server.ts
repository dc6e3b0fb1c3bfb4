/**
 * A gRPC-Web server on a real socket for the unit tests (connect-node's adapter, which
 * speaks gRPC-Web as the kozyr edge does): the services' behaviour is each test's own,
 * so a test can answer, refuse with kozyr's error details, or cut a stream, and see
 * what the client sent.
 */
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorInfoSchema, LocalizedMessageSchema } from "../src/gen/google/rpc/error_details_pb.js";

export interface TestServer {
  baseUrl: string;
  close(): Promise<void>;
}

/** Serve `impl` of `service` (and more, through `extra`) on 127.0.0.1, a free port. */
export async function serve<S extends DescService>(
  service: S,
  impl: Partial<ServiceImpl<S>>,
  extra?: (router: ConnectRouter) => void,
): Promise<TestServer> {
  const handler = connectNodeAdapter({
    routes: (router) => {
      router.service(service, impl);
      extra?.(router);
    },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A refusal as kozyr's services send it (kozyr.runtime.errors.to_rich_status): an
 * ErrorInfo, then one LocalizedMessage per language, `first` first. */
export function kozyrError(
  code: Code,
  reason: string,
  texts: Record<string, string>,
  metadata: Record<string, string> = {},
): ConnectError {
  const details = [
    { desc: ErrorInfoSchema, value: { reason, domain: "kozyr", metadata } },
    ...Object.entries(texts).map(([locale, message]) => ({
      desc: LocalizedMessageSchema,
      value: { locale, message },
    })),
  ];
  return new ConnectError(texts["en"] ?? reason, code, undefined, details);
}
