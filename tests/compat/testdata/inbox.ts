// A loopback HTTP server standing in for a remote inbox.  node:http, because
// Deno, Node.js and Bun all provide it.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deferred } from "@fedify/fixture";

/** A POST the inbox received. */
export interface Delivery {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** A running inbox server. */
export interface Inbox {
  /** The server's base URL, e.g. `http://127.0.0.1:43210/`. */
  readonly url: URL;
  /** Resolves with the first request, whether it was answered or not. */
  readonly firstRequest: Promise<Delivery>;
  /** Resolves with the first request answered with 202 Accepted. */
  readonly accepted: Promise<Delivery>;
  close(): Promise<void>;
}

/**
 * Starts an inbox on 127.0.0.1.
 * @param options.holdFirst Leave the first request unanswered for ever (a
 *        worker killed while it waits never gets an answer); answer the
 *        others with 202.  Otherwise every request gets 202.
 */
export function startInbox(options: { holdFirst?: boolean } = {}): Promise<Inbox> {
  const first = deferred<Delivery>();
  const accepted = deferred<Delivery>();
  let requests = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => body += chunk);
    request.on("end", () => {
      const delivery = { path: request.url ?? "", headers: request.headers, body };
      requests++;
      first.resolve(delivery);
      if (options.holdFirst && requests === 1) return;
      response.writeHead(202).end();
      accepted.resolve(delivery);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: new URL(`http://127.0.0.1:${port}/`),
        firstRequest: first.promise,
        accepted: accepted.promise,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
