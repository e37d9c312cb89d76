// Shared by the interop tests: an actor with keys, a document loader that
// serves it, and loopback HTTP servers answering through a Fetch handler.
import { startTestServer, type TestServer, waitUntil } from "@fedify/fixture";
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

/**
 * A loopback HTTP server answering through `handle`, recording each
 * request's headers (@fedify/fixture's test server).
 */
export async function startServer(
  handle: (request: Request) => Promise<Response>,
): Promise<{ url: URL; readonly requests: Headers[]; close(): Promise<void> } & AsyncDisposable> {
  const server = await startTestServer(handle);
  return {
    url: server.url,
    get requests() {
      return server.requests.map((request) => request.headers);
    },
    close: () => server.close(),
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/** A loopback HTTP server answering through a Fetch API handler. */
export type FetchServer = TestServer;

/**
 * Serves `handle` on a loopback port (@fedify/fixture's test server).
 * @param handle The Fetch API handler.
 * @returns The running server.
 */
export function serveFetch(handle: (request: Request) => Promise<Response>): Promise<FetchServer> {
  return startTestServer(handle);
}

/**
 * Resolves once `predicate` holds, checking every 10 ms: for what is
 * recorded after a response is sent (a listener may run before it).
 */
export function until(predicate: () => boolean, label: string): Promise<void> {
  return waitUntil(predicate, { what: label, intervalMs: 10 });
}

export { deferred, within } from "@fedify/fixture";
