import type { DocumentLoader, RemoteDocument } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { assertKnownOptions } from "../../options/known-options.ts";
import { signHeaders } from "../signatures/sign.ts";
import { type HttpSignatureSpec, otherHttpSignatureSpec } from "../signatures/spec.ts";
import {
  fetchRemoteSigned,
  JSON_LD_CONTENT_TYPES,
  type OutgoingSigner,
  type RemoteRequestLimits,
  type RemoteResponse,
  resolveRemoteRequestLimits,
} from "./outgoing-http.ts";

/**
 * Options for {@link createFetchDocumentLoader}.
 * @since 0.1.0
 */
export interface FetchDocumentLoaderOptions extends RemoteRequestLimits {
  /** The `User-Agent` header to send. */
  readonly userAgent: string;
  /** Whether loopback and private addresses may be fetched. */
  readonly allowPrivateAddress: boolean;
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

const DOCUMENT_LOADER_OPTION_NAMES: readonly (keyof FetchDocumentLoaderOptions)[] = [
  "timeout",
  "maxBodyBytes",
  "maxRedirects",
  "userAgent",
  "allowPrivateAddress",
  "signer",
];

/**
 * Creates a JSON-LD document loader on top of {@link fetchRemote}, so
 * every load keeps its limits: a total time limit (`timeout`, 10 seconds by
 * default), a body cap (`maxBodyBytes`, 1 MiB), `maxRedirects` (5) with
 * the address guard at each hop, and JSON-LD content types only
 * (`application/activity+json`, `application/ld+json`, `application/json`).
 * The `documentUrl` it returns is the URL that finally answered, after
 * redirects: a caller that trusts a document's claims about an origin
 * compares them with that URL's, not with the one it asked for.  The
 * well-known JSON-LD contexts (ActivityStreams, security, …) are served from
 * the copies bundled with `@fedify/vocab-runtime` without a request, so
 * decoding vocabulary objects needs no network.  With `signer`, every GET
 * is signed (authorized fetch).
 * @param options The user agent, address policy, limits and signer.
 * @returns The document loader.
 * @throws {UnknownOptionError} When `options` holds a name it does not know.
 * @throws {TypeError} When a limit has the wrong type.
 * @throws {RangeError} When a limit is out of range.
 * @since 0.1.0
 */
export function createFetchDocumentLoader(options: FetchDocumentLoaderOptions): DocumentLoader {
  // Checked once, here, so that a wrong option fails at definition time.
  assertKnownOptions(options, DOCUMENT_LOADER_OPTION_NAMES, {
    where: "createFetchDocumentLoader()",
  });
  resolveRemoteRequestLimits(options);
  // What fetchRemote() takes: everything but the signer, which signs below.
  const { signer: _signer, ...fetchOptions } = options;
  return async (url, loaderOptions): Promise<RemoteDocument> => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return { documentUrl: url, document: preloadedContexts[url], contextUrl: null };
    }
    const get = (sign?: OutgoingSigner) =>
      fetchRemoteSigned(url, {
        ...fetchOptions,
        headers: { Accept: "application/activity+json, application/ld+json" },
        acceptContentTypes: JSON_LD_CONTENT_TYPES,
        signal: loaderOptions?.signal,
      }, sign);
    const { signer } = options;
    let response: RemoteResponse;
    if (signer == null) {
      response = await get();
    } else {
      const first = signer.firstKnock ?? "rfc9421";
      const signWith = (spec: HttpSignatureSpec): OutgoingSigner => (request) =>
        signHeaders(request, signer.privateKey, signer.keyId, spec, null, Date.now());
      response = await get(signWith(first));
      // Double knock: the server may verify only the other scheme.
      if (response.status === 401 || response.status === 403) {
        response = await get(signWith(otherHttpSignatureSpec(first)));
      }
    }
    if (!response.ok) {
      throw new Error(`Failed to load ${response.url.href}: HTTP ${response.status}.`);
    }
    return { documentUrl: response.url.href, document: response.json(), contextUrl: null };
  };
}
