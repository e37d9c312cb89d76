// Test-only: HTTP servers on several loopback addresses (127.0.0.1,
// 127.0.0.2, …), each a host of its own for the host policy, recording
// every request with the time it arrived, and how many it answered at once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a loopback host received. */
export interface HostRequest {
  readonly method: string;
  readonly path: string;
  readonly at: number;
}

/** A server on one loopback address. */
export interface LoopbackHost extends AsyncDisposable {
  /** `http://<address>:<port>/`. */
  readonly url: URL;
  readonly requests: HostRequest[];
  /** The most requests it was answering at once. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

/** What a loopback host answers. */
export interface HostAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** How long to hold the answer, in milliseconds. */
  readonly delayMs?: number;
}

/**
 * Starts an HTTP server on a loopback address, on a free port.
 * @param address The address, e.g. `127.0.0.2` (Linux routes all of
 *                127.0.0.0/8 to the loopback interface).
 * @param answer What to answer the request `index` (0 first).
 */
export async function startLoopbackHost(
  address: string,
  answer: (request: HostRequest, index: number) => HostAnswer = () => ({ status: 202 }),
): Promise<LoopbackHost> {
  const requests: HostRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req, res) => {
    const request = { method: req.method ?? "GET", path: req.url ?? "/", at: Date.now() };
    const index = requests.push(request) - 1;
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    req.resume();
    req.on("end", () => {
      const { status, headers, delayMs = 0 } = answer(request, index);
      setTimeout(() => {
        // Before the answer leaves: the sender holds its slot until it has it.
        inFlight--;
        res.writeHead(status, { Connection: "close", ...headers });
        res.end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return {
    url: new URL(`http://${address}:${port}/`),
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
