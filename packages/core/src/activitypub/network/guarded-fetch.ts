import { PrivateAddressError } from "./errors.ts";
import { assertPublicUrl, isLocalhostName, resolvePublicAddresses } from "./private-address.ts";

/**
 * Options for {@link guardedFetch}.
 * @since 0.3.0
 */
export interface GuardedFetchOptions {
  /** Whether loopback and private addresses may be contacted. */
  readonly allowPrivateAddress: boolean;
  /** Aborts the address check and the request. */
  readonly signal: AbortSignal;
}

/**
 * Sends one request (no redirect is followed here), making sure it reaches
 * only public addresses unless `allowPrivateAddress`.
 *
 * What each runtime guarantees:
 * - **Node.js**: the guard is the connection's DNS lookup (an undici
 *   `Agent` whose `connect.lookup` resolves the name and refuses it if any
 *   address is non-public), so the address judged is the address
 *   connected to: a name whose DNS answers change (DNS rebinding) cannot
 *   slip between the check and the connection.
 * - **Deno and Bun**: their `fetch()` has no hook for the lookup, so the
 *   name is resolved and judged first and `fetch()` resolves it again to
 *   connect.  A rebinding name with a zero TTL could pass the check and
 *   then connect to a private address; an egress firewall closes that gap.
 *
 * On every runtime an IP literal is judged as written, without DNS.
 * @param request The request.
 * @param options The address policy and the signal.
 * @returns The response.
 * @throws {PrivateAddressError} When the host is not public.
 * @since 0.3.0
 */
export async function guardedFetch(
  request: Request,
  options: GuardedFetchOptions,
): Promise<Response> {
  if (options.allowPrivateAddress) return await fetch(request);
  const url = new URL(request.url);
  const dispatcher = isLiteralHost(url.hostname) ? null : await pinnedDispatcher();
  if (dispatcher == null) {
    await abortable(assertPublicUrl(url), options.signal);
    return await fetch(request);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`Only http(s) URLs can be contacted; got ${url.href}.`);
  }
  // Refused by name before fetch() looks at anything else (a bad port).
  if (isLocalhostName(url.hostname)) {
    throw new PrivateAddressError(url.href, url.hostname);
  }
  try {
    // Node.js's fetch() takes an undici dispatcher beside the standard
    // options.
    return await fetch(request, { dispatcher } as RequestInit);
  } catch (error) {
    // fetch() reports a failed lookup as "fetch failed" with the cause.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof PrivateAddressError) {
      throw new PrivateAddressError(url.href, cause.address);
    }
    throw error;
  }
}

function isLiteralHost(hostname: string): boolean {
  // The URL parser writes every IPv4 spelling of an http(s) URL as four
  // decimals, and IPv6 in brackets.
  return hostname.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(hostname);
}

let dispatcher: Promise<unknown | null> | undefined;

/** The pinning undici Agent on Node.js; `null` on other runtimes. */
function pinnedDispatcher(): Promise<unknown | null> {
  dispatcher ??= (async () => {
    const global = globalThis as { Deno?: unknown; Bun?: unknown; process?: NodeProcess };
    if (global.Deno != null || global.Bun != null || global.process?.versions?.node == null) {
      return null;
    }
    try {
      const { Agent } = await import("undici");
      return new Agent({ connect: { lookup: guardedLookup } });
    } catch {
      // Without undici (an unusual install), the check-then-connect path.
      return null;
    }
  })();
  return dispatcher;
}

interface NodeProcess {
  readonly versions?: { readonly node?: string };
}

type LookupCallback = (
  error: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

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
