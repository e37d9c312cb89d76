import type { DocumentLoader, RemoteDocument } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { signRequest } from "../signatures/sign.ts";
import { type HttpSignatureSpec, otherHttpSignatureSpec } from "../signatures/spec.ts";
import { assertPublicUrl } from "./private-address.ts";

/**
 * Options for {@link createFetchDocumentLoader}.
 * @since 0.1.0
 */
export interface FetchDocumentLoaderOptions {
  /** The `User-Agent` header to send. */
  readonly userAgent: string;
  /** Whether loopback and private addresses may be fetched. */
  readonly allowPrivateAddress: boolean;
  /** How many redirects to follow; 5 by default. */
  readonly maxRedirects?: number;
  /**
   * Signs every GET with this key (authorized fetch, a.k.a. Mastodon's
   * secure mode): first in `firstKnock` (RFC 9421 by default) and, when the
   * server answers 401 or 403, once more in the other scheme.
   * @since 0.2.0
   */
  readonly signer?: {
    readonly keyId: URL;
    readonly privateKey: CryptoKey;
    readonly firstKnock?: HttpSignatureSpec;
  };
}

/**
 * Creates a JSON-LD document loader on top of `fetch()`.  The well-known
 * JSON-LD contexts (ActivityStreams, security, …) are served from the copies
 * bundled with `@fedify/vocab-runtime` without a request, so decoding
 * vocabulary objects needs no network.  Redirects are followed by hand so
 * that every hop is checked against `allowPrivateAddress`.  With `signer`,
 * every GET is signed (authorized fetch).
 * @param options The user agent and address policy.
 * @returns The document loader.
 * @since 0.1.0
 */
export function createFetchDocumentLoader(options: FetchDocumentLoaderOptions): DocumentLoader {
  const maxRedirects = options.maxRedirects ?? 5;
  return async (url, loaderOptions): Promise<RemoteDocument> => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return { documentUrl: url, document: preloadedContexts[url], contextUrl: null };
    }
    let current = new URL(url);
    for (let hop = 0; hop <= maxRedirects; hop++) {
      if (!options.allowPrivateAddress) await assertPublicUrl(current);
      const response = await get(current, options, loaderOptions?.signal);
      const location = response.headers.get("Location");
      if (response.status >= 300 && response.status < 400 && location != null) {
        await response.body?.cancel();
        current = new URL(location, current);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`Failed to load ${current.href}: HTTP ${response.status}.`);
      }
      return { documentUrl: current.href, document: await response.json(), contextUrl: null };
    }
    throw new Error(`Failed to load ${url}: more than ${maxRedirects} redirects.`);
  };
}

async function get(
  url: URL,
  options: FetchDocumentLoaderOptions,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const request = () =>
    new Request(url, {
      headers: {
        Accept: "application/activity+json, application/ld+json",
        "User-Agent": options.userAgent,
      },
      redirect: "manual",
      signal,
    });
  const { signer } = options;
  if (signer == null) return await fetch(request());
  const first = signer.firstKnock ?? "rfc9421";
  const response = await fetch(
    await signRequest(request(), signer.privateKey, signer.keyId, { spec: first }),
  );
  if (response.status !== 401 && response.status !== 403) return response;
  // Double knock: the server may verify only the other scheme.
  await response.body?.cancel();
  return await fetch(
    await signRequest(request(), signer.privateKey, signer.keyId, {
      spec: otherHttpSignatureSpec(first),
    }),
  );
}
