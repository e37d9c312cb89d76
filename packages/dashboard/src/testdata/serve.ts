// A real HTTP server on loopback for the dashboard's browser tests.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";
import { sendFetchResponse } from "@fedwork/express";

/** Serves a Fetch API handler on 127.0.0.1, aborting a request's signal when its client goes. */
export async function serve(handler: (request: Request) => Promise<Response>) {
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    req.on("end", async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value == null) continue;
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const { port } = server.address() as AddressInfo;
      const method = req.method ?? "GET";
      const request = new Request(`http://127.0.0.1:${port}${req.url ?? "/"}`, {
        method,
        headers,
        body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
        signal: controller.signal,
      });
      try {
        await sendFetchResponse(res, await handler(request));
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
