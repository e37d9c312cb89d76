// Helpers shared by the activitypub tests.  Not exported from mod.ts.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A request a {@link TestServer} received, with its body already read. */
export interface RecordedRequest {
  readonly method: string;
  /** The full URL, e.g. `http://127.0.0.1:43210/inbox`. */
  readonly url: string;
  readonly headers: Headers;
  readonly body: string;
}

/** A real HTTP server on 127.0.0.1 that answers through a Fetch API handler. */
export interface TestServer extends AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:43210/`. */
  readonly url: URL;
  /** Every request received so far, in order. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a {@link TestServer}.  Each incoming request is turned into a Fetch
 * API `Request` for `handle`, whose `Response` is written back, so tests can
 * run the very verifiers an application would.  node:http is used because
 * Deno, Node.js and Bun all provide it.
 */
export async function startTestServer(
  handle: (request: Request, index: number) => Response | Promise<Response>,
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    req.on("end", async () => {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}${req.url ?? "/"}`;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value == null) continue;
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const body = Buffer.concat(chunks);
      const index = requests.length;
      requests.push({ method: req.method ?? "GET", url, headers, body: body.toString("utf8") });
      let response: Response;
      try {
        response = await handle(
          new Request(url, {
            method: req.method,
            headers,
            body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
          }),
          index,
        );
      } catch (error) {
        response = new Response(String(error), { status: 500 });
      }
      const responseHeaders: Record<string, string> = { Connection: "close" };
      response.headers.forEach((value, name) => responseHeaders[name] = value);
      res.writeHead(response.status, responseHeaders);
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
