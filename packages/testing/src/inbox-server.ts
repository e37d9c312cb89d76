import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createDeferred, type Deferred } from "./wait.ts";

/** One request an {@link InboxServer} received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly contentType: string | undefined;
  /** The `Signature` header: deliveries are signed. */
  readonly signature: string | undefined;
  readonly body: string;
}

/** A real HTTP server on 127.0.0.1 that records what is POSTed to it. */
export interface InboxServer {
  /** The server's base URL, e.g. `http://127.0.0.1:43210/`. */
  readonly url: URL;
  /** Resolves with the first request received. */
  readonly firstRequest: Promise<ReceivedRequest>;
  close(): Promise<void>;
}

// node:http is used (rather than Deno.serve or Bun.serve) because all three
// runtimes provide it, so one server serves the suite everywhere.
/**
 * Starts an {@link InboxServer} that answers every request with 202.
 * @returns The running server.
 */
export function startInboxServer(): Promise<InboxServer> {
  const first: Deferred<ReceivedRequest> = createDeferred();
  const server = createServer((request: IncomingMessage, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => body += chunk);
    request.on("end", () => {
      first.resolve({
        method: request.method ?? "",
        path: request.url ?? "",
        contentType: request.headers["content-type"],
        signature: request.headers["signature"] as string | undefined,
        body,
      });
      response.writeHead(202).end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: new URL(`http://127.0.0.1:${port}/`),
        firstRequest: first.promise,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}
