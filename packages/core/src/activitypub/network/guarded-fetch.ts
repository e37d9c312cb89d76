import { assertPublicUrl } from "./private-address.ts";

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
 * Sends one request (no redirect is followed here) after checking that its
 * host resolves only to public addresses, unless `allowPrivateAddress`.
 *
 * What each runtime guarantees: the check resolves the host name and judges
 * every address it gets; `fetch()` then resolves the name again to connect.
 * A name whose DNS answers change between the two (DNS rebinding, with a
 * TTL of zero) could pass the check and connect to a private address; the
 * Fetch API of Deno, Node.js and Bun offers no hook to connect to a checked
 * address.  The security page of the manual tells operators to add an
 * egress firewall for that reason.
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
  if (!options.allowPrivateAddress) {
    await abortable(assertPublicUrl(new URL(request.url)), options.signal);
  }
  return await fetch(request);
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
