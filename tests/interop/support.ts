// Shared by the interop tests: an actor with keys, a document loader that
// serves it, and a loopback HTTP server answering through a Fetch handler.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buildActorKeyPairs, generateCryptoKeyPair } from "@fedwork/core";
import { type DocumentLoader, Person } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";

/** An actor with one RSA key pair and a loader serving its document. */
export async function createTestActor(uri: string) {
  const id = new URL(uri);
  const [pair] = buildActorKeyPairs(id, [await generateCryptoKeyPair()]);
  const document = await new Person({
    id,
    preferredUsername: id.pathname.split("/").at(-1),
    inbox: new URL(`${id.href}/inbox`),
    publicKey: pair.cryptographicKey,
    assertionMethods: [pair.multikey],
  }).toJsonLd();
  const documentLoader: DocumentLoader = (url) => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return Promise.resolve({
        documentUrl: url,
        document: preloadedContexts[url],
        contextUrl: null,
      });
    }
    // Like HTTP, ignore the fragment: Fedify loads key ids as they are.
    if (url.replace(/#.*$/s, "") === id.href) {
      return Promise.resolve({ documentUrl: url, document, contextUrl: null });
    }
    return Promise.reject(new Error(`No document at ${url} in this test.`));
  };
  return { id, pair, document, documentLoader };
}

/** A real HTTP server on 127.0.0.1 (node:http runs on Deno, Node.js and Bun). */
export async function startServer(
  handle: (request: Request) => Promise<Response>,
): Promise<{ url: URL; requests: Headers[]; close(): Promise<void> } & AsyncDisposable> {
  const requests: Headers[] = [];
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    req.on("end", async () => {
      const { port } = server.address() as AddressInfo;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
      }
      requests.push(headers);
      const response = await handle(
        new Request(`http://127.0.0.1:${port}${req.url}`, {
          method: req.method,
          headers,
          body: req.method === "GET" ? undefined : Buffer.concat(chunks),
        }),
      ).catch((error) => new Response(String(error), { status: 500 }));
      res.writeHead(response.status, { Connection: "close" });
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

/** A Fetch API handler served on 127.0.0.1. */
export interface FetchServer extends AsyncDisposable {
  /** The base URL, e.g. `http://127.0.0.1:43210/`. */
  readonly url: URL;
  close(): Promise<void>;
}

/**
 * Serves a Fetch API handler (e.g. `federation.fetch`) on a real HTTP server
 * on 127.0.0.1, keeping the response's status and headers.  The handler
 * may be set after the server is up, once its URL is known.
 */
export async function serveFetch(
  handle: (request: Request) => Promise<Response>,
): Promise<FetchServer> {
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    req.on("end", async () => {
      const { port } = server.address() as AddressInfo;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value == null) continue;
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const method = req.method ?? "GET";
      const response = await handle(
        new Request(`http://127.0.0.1:${port}${req.url}`, {
          method,
          headers,
          body: method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks),
        }),
      ).catch((error) => new Response(String(error), { status: 500 }));
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
  return { url: new URL(`http://127.0.0.1:${port}/`), close, [Symbol.asyncDispose]: close };
}

/** Resolves when `promise` does, or rejects after `ms` naming what was awaited. */
export async function within<T>(promise: Promise<T>, label: string, ms = 30_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Timed out waiting for ${label}.`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolver exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
}

/**
 * Resolves once `predicate` holds, checking every 10 ms: for what is
 * recorded after a response is sent (a listener may run before it).
 */
export function until(predicate: () => boolean, label: string): Promise<void> {
  return within(
    (async () => {
      while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 10));
    })(),
    label,
  );
}
