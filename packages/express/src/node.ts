import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Options for {@link toFetchRequest} and {@link createNodeRequestListener}.
 * @since 0.2.0
 */
export interface NodeRequestOptions {
  /**
   * The public origin of the server, e.g. `https://example.com`, when the
   * request's own (`http://` + its `Host` header) is not it: behind a
   * TLS-terminating proxy.
   * @default `http://` and the request's `Host` header
   */
  readonly origin?: string | URL;
}

/**
 * Turns a Node.js request into a Fetch API `Request`.  The body is read
 * from the request's stream only when the `Request`'s body is read, so a
 * request the federation hands back (`onNotFound`) can still be read by the
 * next handler; no body parser may have consumed it before.
 * @param req The Node.js request (also an Express request).
 * @param options The public origin.
 * @returns The request.
 * @since 0.2.0
 */
export function toFetchRequest(req: IncomingMessage, options: NodeRequestOptions = {}): Request {
  const origin = options.origin == null
    ? `http://${req.headers.host ?? "localhost"}`
    : new URL(options.origin).origin;
  const url = new URL(req.url ?? "/", origin);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value == null) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  let chunks: AsyncIterator<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    // Pull, not push: the stream stays paused until someone reads the body.
    async pull(controller) {
      chunks ??= (req as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
      const { done, value } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(new Uint8Array(value));
    },
    async cancel() {
      await chunks?.return?.();
    },
    // No read-ahead: not even one chunk is taken before the body is read.
  }, { highWaterMark: 0 });
  return new Request(url, { method, headers, body, duplex: "half" } as RequestInit);
}

/**
 * Writes a Fetch API `Response` to a Node.js response: status, headers
 * (repeated ones such as `Set-Cookie` kept apart) and the body, streamed.
 * @param res The Node.js response.
 * @param response The response to write.
 * @returns Resolves once the body is written.
 * @since 0.2.0
 */
export async function sendFetchResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") return;
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, response.statusText, headers);
  if (response.body == null) {
    res.end();
    return;
  }
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    res.write(chunk);
  }
  res.end();
}

/**
 * Adapts a Fetch API handler (e.g. `(request) => federation.fetch(request,
 * { contextData })`) to a `node:http` request listener: the Node.js
 * adapter, for servers without a framework.  A handler that throws
 * answers 500.
 * @param handler The Fetch API handler.
 * @param options The public origin.
 * @returns The request listener, for `createServer()`.
 * @since 0.2.0
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { createNodeRequestListener } from "@fedwork/express";
 *
 * createServer(createNodeRequestListener((request) =>
 *   federation.fetch(request, { contextData: undefined })
 * )).listen(8000);
 * ```
 */
export function createNodeRequestListener(
  handler: (request: Request) => Response | Promise<Response>,
  options: NodeRequestOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    (async () => {
      let response: Response;
      try {
        response = await handler(toFetchRequest(req, options));
      } catch {
        response = new Response("Internal Server Error", { status: 500 });
      }
      await sendFetchResponse(res, response);
    })().catch(() => res.destroy());
  };
}
