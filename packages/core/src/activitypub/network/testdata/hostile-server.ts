// A loopback HTTP server that misbehaves the way a hostile peer does, for
// the hostile-peer tests: it never answers, trickles its body one byte at a
// time, or streams an endless body, and counts what it managed to send.
// Written on node:http (which Deno, Node.js and Bun all provide) because
// the shared test server buffers whole responses and so cannot trickle.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the server answers every request. */
export type HostileBehaviour =
  /** Accepts the connection and never answers. */
  | { readonly kind: "hang" }
  /** Sends the headers, then one byte of body every `intervalMs`. */
  | { readonly kind: "trickle"; readonly intervalMs: number; readonly contentType?: string }
  /**
   * Streams `totalBytes` of body in 64 KiB chunks as fast as the client
   * reads, declaring the length or not.
   */
  | {
    readonly kind: "huge";
    readonly totalBytes: number;
    readonly declareLength: boolean;
    readonly status?: number;
    readonly contentType?: string;
  };

export interface HostileServer extends AsyncDisposable {
  readonly url: URL;
  /** Requests received so far. */
  readonly requests: number;
  /** Body bytes written so far, over all requests. */
  readonly bytesSent: number;
  /** Resolves when the client has closed `count` connections. */
  waitForClosed(count: number): Promise<void>;
  close(): Promise<void>;
}

const CHUNK = new Uint8Array(64 * 1024).fill(0x20);

export async function startHostileServer(behaviour: HostileBehaviour): Promise<HostileServer> {
  let requests = 0;
  let bytesSent = 0;
  let closed = 0;
  let closeWaiters: { count: number; resolve: () => void }[] = [];
  const timers = new Set<ReturnType<typeof setInterval>>();
  const onClosed = () => {
    closed++;
    closeWaiters = closeWaiters.filter((waiter) => {
      if (closed < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  };
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    let done = false;
    res.on("close", () => {
      done = true;
      onClosed();
    });
    switch (behaviour.kind) {
      case "hang":
        return;
      case "trickle": {
        res.writeHead(200, {
          "Content-Type": behaviour.contentType ?? "application/activity+json",
        });
        res.write("{");
        bytesSent++;
        const timer = setInterval(() => {
          if (done) {
            clearInterval(timer);
            timers.delete(timer);
            return;
          }
          res.write(" ");
          bytesSent++;
        }, behaviour.intervalMs);
        timers.add(timer);
        return;
      }
      case "huge":
        void streamHuge(res, behaviour, () => done, (n) => bytesSent += n);
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    get requests() {
      return requests;
    },
    get bytesSent() {
      return bytesSent;
    },
    waitForClosed(count) {
      if (closed >= count) return Promise.resolve();
      return new Promise((resolve) => closeWaiters.push({ count, resolve }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function streamHuge(
  res: ServerResponse,
  behaviour: Extract<HostileBehaviour, { kind: "huge" }>,
  isDone: () => boolean,
  count: (bytes: number) => void,
): Promise<void> {
  res.writeHead(behaviour.status ?? 200, {
    "Content-Type": behaviour.contentType ?? "application/activity+json",
    ...(behaviour.declareLength ? { "Content-Length": String(behaviour.totalBytes) } : {}),
  });
  let sent = 0;
  while (sent < behaviour.totalBytes && !isDone()) {
    const chunk = CHUNK.subarray(0, Math.min(CHUNK.byteLength, behaviour.totalBytes - sent));
    sent += chunk.byteLength;
    count(chunk.byteLength);
    // Honour back-pressure: a client that stops reading stops the stream.
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const finish = () => {
          res.off("drain", finish);
          res.off("close", finish);
          resolve();
        };
        res.on("drain", finish);
        res.on("close", finish);
      });
    }
  }
  if (!isDone()) res.end();
}
