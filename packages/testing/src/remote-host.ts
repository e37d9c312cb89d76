// A remote server for the host policy tests: one HTTP server on a loopback
// address, standing for one fediverse host with many followers' inboxes.
// It counts the requests it is answering at once (the highest count is what
// a per-host concurrency limit bounds), records when each arrived on this
// process's monotonic clock, and answers as the test says (after a delay,
// or 429 with Retry-After).  Internal to @fedwork/testing.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { within } from "./wait.ts";

/** The longest body the host reads; a delivery is far smaller. */
const MAX_BODY_BYTES = 1 << 20;

/** One request the host received. */
export interface RemoteHostRequest {
  readonly method: string;
  /** The path, e.g. `/users/u7/inbox`. */
  readonly path: string;
  /** When it arrived, in `performance.now()` milliseconds of this process. */
  readonly at: number;
  /** When its answer was sent, likewise; absent until then. */
  answeredAt?: number;
  /** Whether it carried an HTTP signature (RFC 9421 or draft-cavage). */
  readonly signed: boolean;
  /** The status it was answered with; absent until then. */
  status?: number;
}

/** What the host answers one request. */
export interface RemoteHostAnswer {
  /** 202 by default. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** How long to hold the answer, in milliseconds; 0 by default. */
  readonly delayMs?: number;
}

/** A running {@link startRemoteHost}. */
export interface RemoteHost extends AsyncDisposable {
  /** `http://<address>:<port>/`. */
  readonly url: URL;
  /** The `host` deliveries to it are keyed by (`<address>:<port>`). */
  readonly host: string;
  /** Every request so far, in order of arrival. */
  readonly requests: readonly RemoteHostRequest[];
  /** How many requests it is answering now. */
  readonly inFlight: number;
  /** The most requests it was ever answering at once. */
  readonly maxInFlight: number;
  /** The personal inbox of follower `n`: `/users/u<n>/inbox`. */
  inbox(n: number): URL;
  /** Resolves once `count` POSTs were answered; fails after `timeoutMs`. */
  waitForAnswered(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a {@link RemoteHost} on a free port.
 * @param options `address`: the loopback address (`127.0.0.1` by default;
 *                Linux routes all of 127.0.0.0/8 to loopback, so each
 *                address is a host of its own); `answer`: what to answer
 *                request `index` (0 first).
 * @returns The running host.
 */
export async function startRemoteHost(
  options: {
    readonly address?: string;
    readonly answer?: (request: RemoteHostRequest, index: number) => RemoteHostAnswer;
  } = {},
): Promise<RemoteHost> {
  const address = options.address ?? "127.0.0.1";
  const answer: (request: RemoteHostRequest, index: number) => RemoteHostAnswer = options.answer ??
    (() => ({}));
  const requests: RemoteHostRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let waiters: { count: number; resolve: () => void }[] = [];
  const answered = () =>
    requests.filter((request) => request.method === "POST" && request.status != null).length;
  const server: Server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const request: RemoteHostRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      at: performance.now(),
      signed: isSigned(req),
    };
    const index = requests.push(request) - 1;
    let counted = true;
    const uncount = () => {
      if (counted) inFlight--;
      counted = false;
    };
    let size = 0;
    req.on("data", (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) req.destroy();
    });
    const finish = () => {
      const { status = 202, headers = {}, delayMs = 0 } = answer(request, index);
      setTimeout(() => {
        // The count drops before the answer leaves: the sender, which holds
        // its slot until it has read the answer, is never behind it.
        uncount();
        request.status = status;
        request.answeredAt = performance.now();
        res.writeHead(status, { Connection: "close", ...headers });
        res.end();
        const count = answered();
        waiters = waiters.filter((waiter) => {
          if (count < waiter.count) return true;
          waiter.resolve();
          return false;
        });
      }, delayMs);
    };
    req.on("end", finish);
    req.on("error", uncount);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://${address}:${port}/`);
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return {
    url,
    host: url.host,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    inbox: (n) => new URL(`/users/u${n}/inbox`, url),
    waitForAnswered(count, timeoutMs) {
      if (answered() >= count) return Promise.resolve();
      return within(
        new Promise<void>((resolve) => waiters.push({ count, resolve })),
        () => `${count} answered deliveries at ${url.host}; ${answered()} so far`,
        timeoutMs,
      );
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function isSigned(req: IncomingMessage): boolean {
  const signature = req.headers["signature"];
  if (req.headers["signature-input"] != null) return signature != null;
  return typeof signature === "string" && /keyId=/.test(signature);
}
