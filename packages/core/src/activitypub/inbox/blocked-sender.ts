// The inbox's side of hostPolicy.block: an activity whose actor, or whose
// signature's key, is on a blocked host is refused before any key is
// fetched, so a blocked server never hears from this one.
import type { PublicKeyFetcher } from "../signatures/key-cache.ts";
import { hostNameOf } from "../host-policy/host-name.ts";
import type { HostBlockPredicate } from "../host-policy/options.ts";

/**
 * Thrown by a key fetcher from {@link guardKeyFetcher} instead of fetching
 * a key on a blocked host; the inbox turns it into a 403.  Internal.
 * @since 0.4.0
 */
export class BlockedKeyHostError extends Error {
  /** The blocked host. */
  readonly host: string;
  /** The key that was not fetched. */
  readonly keyId: URL;

  /**
   * @param host The blocked host.
   * @param keyId The key that was not fetched.
   */
  constructor(host: string, keyId: URL) {
    super(`The key ${keyId.href} is on the blocked host ${host}; it was not fetched.`);
    this.name = "BlockedKeyHostError";
    this.host = host;
    this.keyId = keyId;
  }
}

/**
 * Wraps a key fetcher so that it never fetches a key on a blocked host.
 * Internal.
 * @param fetchKey The fetcher.
 * @param isBlocked Whether a host is blocked.
 * @returns The guarded fetcher, which throws {@link BlockedKeyHostError}
 *          for a key on a blocked host.
 * @since 0.4.0
 */
export function guardKeyFetcher(
  fetchKey: PublicKeyFetcher,
  isBlocked: HostBlockPredicate,
): PublicKeyFetcher {
  return async (keyId, options) => {
    const host = hostNameOf(keyId);
    if (await isBlocked(host)) throw new BlockedKeyHostError(host, keyId);
    return await fetchKey(keyId, options);
  };
}

/**
 * The blocked host of an activity's `actor`s (a URL, an object with an
 * `id`, or a list of them), if one is blocked.  Internal.
 * @param activity The activity, unverified.
 * @param isBlocked Whether a host is blocked.
 * @returns The first blocked host, or `undefined`.
 * @since 0.4.0
 */
export async function blockedActorHost(
  activity: Record<string, unknown>,
  isBlocked: HostBlockPredicate,
): Promise<string | undefined> {
  const actors = Array.isArray(activity.actor) ? activity.actor : [activity.actor];
  // Few actors are legitimate; a long list is checked no further than this.
  for (const actor of actors.slice(0, 16)) {
    const id = typeof actor === "object" && actor != null
      ? (actor as Record<string, unknown>).id
      : actor;
    if (typeof id !== "string" || !URL.canParse(id)) continue;
    const url = new URL(id);
    if (url.host === "") continue;
    const host = hostNameOf(url);
    if (await isBlocked(host)) return host;
  }
  return undefined;
}
