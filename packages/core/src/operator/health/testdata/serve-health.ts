// A real HTTP server for the health handler's tests: node:http (which
// Deno, Node.js and Bun all provide), passing the connection's remote
// address as a server would.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { HealthHandler } from "../handler.ts";

/** A running server. */
export interface HealthServer {
  /** The base URL on the host it listens on. */
  readonly url: URL;
  close(): Promise<void>;
}

/**
 * Serves `handler` on `host` (loopback by default), port 0.
 * @param handler The health handler.
 * @param host The address to listen on.
 * @returns The server.
 */
export async function serveHealth(
  handler: HealthHandler,
  host: string = "127.0.0.1",
): Promise<HealthServer> {
  const server = createServer(async (req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value == null) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    const { port } = server.address() as AddressInfo;
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}${req.url ?? "/"}`;
    const response = await handler(
      new Request(url, { method: req.method, headers }),
      { remoteAddress: req.socket.remoteAddress },
    );
    const responseHeaders: Record<string, string> = { Connection: "close" };
    response.headers.forEach((value, name) => responseHeaders[name] = value);
    res.writeHead(response.status, responseHeaders);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://${host.includes(":") ? `[${host}]` : host}:${port}/`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
