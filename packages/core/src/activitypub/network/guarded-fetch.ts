import { readBodyCapped } from "../../http/capped-body.ts";
import { PrivateAddressError } from "./errors.ts";
import {
  type AddressCheck,
  loadNodeHttpClient,
  type LookupCallback,
  type NodeHttpClient,
} from "./node-http-client.ts";
import type { AnsweredRequest, OutgoingRequest } from "./outgoing-request.ts";
import { assertPublicUrl, isLocalhostName, resolvePublicAddresses } from "./private-address.ts";

/**
 * Options for {@link guardedFetch}.
 * @since 0.3.0
 */
export interface GuardedFetchOptions {
  /** Whether loopback and private addresses may be contacted. */
  readonly allowPrivateAddress: boolean;
  /** Aborts the address check, the request and the body's reading. */
  readonly signal: AbortSignal;
}

/** The Node.js HTTP client (one for the process), `null` elsewhere. */
let nodeHttpClient: Promise<NodeHttpClient | null> | undefined;

/**
 * Sends one request (no redirect is followed here), making sure it reaches
 * only public addresses unless `allowPrivateAddress`, and resolves once the
 * response headers arrived.
 *
 * How it sends, and what each runtime guarantees:
 * - **Node.js**: through `node:http` and `node:https` with kept-alive
 *   connections (`node-http-client.ts` says why not `fetch()`).  The guard
 *   is the connection's own DNS lookup, which refuses a name if any of its
 *   addresses is non-public, so the address judged is the address
 *   connected to: a name whose DNS answers change (DNS rebinding) cannot
 *   slip between the check and the connection.
 * - **Deno, Bun and Cloudflare Workers**: through `fetch()`, which has no
 *   hook for the lookup, so the name is resolved and judged first and
 *   `fetch()` resolves it again to connect.  A rebinding name with a zero
 *   TTL could pass the check and then connect to a private address; an
 *   egress firewall closes that gap.
 *
 * On every runtime an IP literal is judged as written, without DNS.
 * @param request The URL, method, headers and body.
 * @param options The address policy and the signal.
 * @returns The response, its body unread.
 * @throws {PrivateAddressError} When the host is not public.
 * @throws {TypeError} On a network error, or a URL that is not http(s).
 * @since 0.3.0
 */
export async function guardedFetch(
  request: OutgoingRequest,
  options: GuardedFetchOptions,
): Promise<AnsweredRequest> {
  const { url } = request;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Only http(s) URLs can be contacted; got ${url.href}.`);
  }
  const client = await (nodeHttpClient ??= loadNodeHttpClient(guardedLookup));
  let check: AddressCheck = "none";
  if (!options.allowPrivateAddress) {
    if (client == null || isLiteralHost(url.hostname)) {
      await abortable(assertPublicUrl(url), options.signal);
    } else if (isLocalhostName(url.hostname)) {
      // Refused by name before anything else is looked at (a bad port).
      throw new PrivateAddressError(url.href, url.hostname);
    } else {
      check = "lookup";
    }
  }
  if (client != null) return await client.send(request, check, options.signal);
  const response = await fetch(url, {
    method: request.method,
    headers: request.headers,
    body: request.body as BodyInit | null,
    redirect: "manual",
    signal: options.signal,
  });
  return fetched(response);
}

/** A `fetch()` response as an {@link AnsweredRequest}. */
function fetched(response: Response): AnsweredRequest {
  return {
    status: response.status,
    headers: response.headers,
    header: (name) => response.headers.get(name),
    read: (maxBytes, signal) => readBodyCapped(response.body, maxBytes, { signal }),
    discard: () => void response.body?.cancel().catch(() => {}),
  };
}

function isLiteralHost(hostname: string): boolean {
  // The URL parser writes every IPv4 spelling of an http(s) URL as four
  // decimals, and IPv6 in brackets.
  return hostname.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * A `dns.lookup`-shaped function that refuses non-public answers, for
 * `net.connect()`'s `lookup` option.
 * @param hostname The name being connected to.
 * @param options Node.js's lookup options (`family`, `all`).
 * @param callback Node.js's lookup callback.
 * @since 0.3.0
 */
export function guardedLookup(
  hostname: string,
  options: { readonly family?: number | string; readonly all?: boolean },
  callback: LookupCallback,
): void {
  resolvePublicAddresses(hostname).then((addresses) => {
    const family = options.family === 4 || options.family === "IPv4"
      ? 4
      : options.family === 6 || options.family === "IPv6"
      ? 6
      : null;
    const usable = family == null ? addresses : addresses.filter((a) => a.family === family);
    if (usable.length < 1) {
      const error = new Error(`The host ${hostname} has no IPv${family} address.`);
      (error as Error & { code: string }).code = "ENOTFOUND";
      callback(error, []);
    } else if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  }, (error: Error) => callback(error, []));
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
